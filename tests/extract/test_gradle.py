"""Gradle builds: spring-petclinic's build.gradle (Groovy) and sunflower's Kotlin DSL with a
version catalog (fixtures/sources/gradle, origins in fixtures/sources/SOURCES.md), and
generated hostile files."""

import re
from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.gradle import GradleBuildExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

GRADLE = REPO / "fixtures" / "sources" / "gradle"
EX = GradleBuildExtractor()
SCHEMA = load_schema()


def run(path: Path, root: Path = GRADLE):
    assert EX.claims(path, path.read_bytes()[:65536]), path
    return EX.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(SCHEMA, [root]))


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_spring_petclinic_groovy_build():
    path = GRADLE / "spring-petclinic" / "build.gradle"
    result = run(path)
    assert result.problems == []
    (node,) = result.nodes
    assert node.id == "gradle:spring-petclinic"  # rootProject.name of settings.gradle
    assert node.attributes["purl"] == "pkg:maven/org.springframework.samples/spring-petclinic"
    assert node.attributes["version"] == "4.0.0-SNAPSHOT"
    text = path.read_text().split("\n")
    block = text.index("dependencies {")
    stated = [n for n, line in enumerate(text, 1) if n > block + 1 and re.match(
        r"^  \w+ ['\"]", line) and n < text.index("}", block) + 1]
    deps = [e for e in result.edges if "plugin" not in e.qualifiers]
    assert [e.line for e in deps] == stated and len(deps) == 25  # every line of the block
    by_name = {e.object: e for e in deps}
    assert by_name["pkg:maven/com.h2database/h2"].qualifiers == (
        "configuration:runtimeOnly", "scope:runtime")
    assert by_name["pkg:maven/org.testcontainers/testcontainers-mysql"].qualifiers == (
        "configuration:testImplementation", "scope:test")
    # ${...} resolved from the ext. properties the file sets
    checkstyle = by_name["pkg:maven/com.puppycrawl.tools/checkstyle"]
    assert checkstyle.qualifiers == ("configuration:checkstyle", "version:12.3.1")
    assert text[checkstyle.line - 1].strip() == checkstyle.evidence
    # plugins with a version are dependencies (their marker artifact); java, checkstyle not
    plugins = {e.object: e.qualifiers for e in result.edges if "plugin" in e.qualifiers}
    assert len(plugins) == 6
    assert plugins["pkg:maven/org.springframework.boot/org.springframework.boot.gradle.plugin"] \
        == ("plugin", "version:4.0.3")


def test_sunflower_kotlin_dsl_with_a_version_catalog():
    root = GRADLE / "sunflower"
    settings = run(root / "settings.gradle.kts")
    assert settings.problems == [] and settings.nodes[0].id == "gradle:sunflower"
    assert [(e.subject, e.predicate, e.object, e.line) for e in settings.edges] == [
        ("gradle:sunflower:app", "partOf", "gradle:sunflower", 33),
        ("gradle:sunflower:macrobenchmark", "partOf", "gradle:sunflower", 34)]
    path = root / "app" / "build.gradle.kts"
    result = run(path)
    assert result.problems == []
    assert result.nodes[0].id == "gradle:sunflower:app"  # meets the settings' include
    assert root / "gradle" / "libs.versions.toml" in result.depends
    text = path.read_text().split("\n")
    block = text.index("dependencies {")
    stated = [n for n, line in enumerate(text, 1) if n > block and re.match(
        r"^  \w+\((platform\()?libs\.", line)]
    deps = [e for e in result.edges if "plugin" not in e.qualifiers]
    assert [e.line for e in deps] == stated and len(deps) == 51
    edges = {(e.object, e.line): e.qualifiers for e in deps}
    # libs.androidx.core.ktx -> [libraries] androidx-core-ktx, version.ref = "core-ktx"
    assert edges[("pkg:maven/androidx.core/core-ktx", 110)] == (
        "configuration:implementation", "version:1.13.1")
    # platform(...) of a catalog entry; a BOM-managed library has no version of its own
    assert edges[("pkg:maven/androidx.compose/compose-bom", 129)] == (
        "configuration:implementation", "platform", "version:2024.05.00")
    assert edges[("pkg:maven/androidx.compose.ui/ui", 133)] == ("configuration:implementation",)
    assert edges[("pkg:maven/junit/junit", 162)] == (
        "configuration:testImplementation", "scope:test", "version:4.13.2")
    assert edges[("pkg:maven/com.google.guava/guava", 158)][:2] == (
        "configuration:androidTestImplementation", "scope:test")
    plugins = {e.object for e in result.edges if "plugin" in e.qualifiers}
    assert "pkg:maven/com.google.devtools.ksp/com.google.devtools.ksp.gradle.plugin" in plugins
    assert len(plugins) == 5


def test_project_dependencies_map_notation_variables_and_bundles(tmp_path):
    write(tmp_path, {
        "settings.gradle": ("rootProject.name = 'shop'\ninclude ':core', ':web', ':api-client'\n"
                            "project(':core').name = 'shop-core'\n"),
        "gradle.properties": "jacksonVersion=2.17.1\n",
        "gradle/libs.versions.toml": ('[versions]\nslf4j = "2.0.13"\n[libraries]\n'
                                      'slf4j-api = { module = "org.slf4j:slf4j-api", '
                                      'version.ref = "slf4j" }\n'
                                      'slf4j-simple = { group = "org.slf4j", name = '
                                      '"slf4j-simple", version.ref = "slf4j" }\n'
                                      '[bundles]\nlogging = ["slf4j-api", "slf4j-simple"]\n'),
        "web/build.gradle": (
            "def kotlinVersion = '2.0.0'\n"
            "dependencies {\n"
            "    implementation project(':core')\n"
            "    implementation group: 'com.google.guava', name: 'guava', version: '33.0-jre'\n"
            "    implementation \"com.fasterxml.jackson.core:jackson-databind:$jacksonVersion\"\n"
            "    implementation(\"org.jetbrains.kotlin:kotlin-stdlib:${kotlinVersion}\") {\n"
            "        exclude group: 'org.jetbrains'\n    }\n"
            "    implementation rootProject.libs.bundles.logging\n"
            "    compileOnly 'org.projectlombok:lombok:1.18.32' // a comment { with braces\n"
            "    /* implementation 'commented:out:1' */\n"
            "    implementation fileTree(dir: 'libs', include: ['*.jar'])\n"
            "    testImplementation(projects.shopCore) // type-safe accessors\n"
            "    testImplementation projects.apiClient\n"
            "    constraints {\n        implementation 'pinned:only:1'\n    }\n"
            "}\n")})
    result = run(tmp_path / "web" / "build.gradle", tmp_path)
    assert result.problems == []
    assert result.nodes[0].id == "gradle:shop:web"
    assert [(e.object, e.line, e.qualifiers) for e in result.edges] == [
        ("gradle:shop:core", 3, ("configuration:implementation", "project")),
        ("pkg:maven/com.google.guava/guava", 4,
         ("configuration:implementation", "version:33.0-jre")),
        ("pkg:maven/com.fasterxml.jackson.core/jackson-databind", 5,
         ("configuration:implementation", "version:2.17.1")),
        ("pkg:maven/org.jetbrains.kotlin/kotlin-stdlib", 6,
         ("configuration:implementation", "version:2.0.0")),
        ("pkg:maven/org.slf4j/slf4j-api", 9,
         ("configuration:implementation", "bundle:logging", "version:2.0.13")),
        ("pkg:maven/org.slf4j/slf4j-simple", 9,
         ("configuration:implementation", "bundle:logging", "version:2.0.13")),
        ("pkg:maven/org.projectlombok/lombok", 10,
         ("configuration:compileOnly", "scope:provided", "version:1.18.32")),
        ("gradle:shop:core", 13, ("configuration:testImplementation", "scope:test", "project")),
        ("gradle:shop:api-client", 14,
         ("configuration:testImplementation", "scope:test", "project"))]
    settings = run(tmp_path / "settings.gradle", tmp_path)
    assert {(e.subject, e.object) for e in settings.edges} == {
        ("gradle:shop:core", "gradle:shop"), ("gradle:shop:web", "gradle:shop"),
        ("gradle:shop:api-client", "gradle:shop")}


@pytest.mark.parametrize("text, line, words", [
    ("dependencies {\n  implementation \"${grp}:b:1\"\n}\n", 2, "cannot resolve 'grp'"),
    ("dependencies {\n  implementation someList[0]\n}\n", 2, "cannot read the dependency"),
    ("dependencies {\n  implementation libs.nothing.here\n}\n", 2, "libs.nothing.here"),
    ("dependencies {\n  if (ci) {\n    implementation 'a:b:1'\n  }\n}\n", 2, "not read"),
    ("\n\ndependencies {\n  implementation 'a:b:1'\n", 3, "braces do not close"),
    ("dependencies {\n" + "(" * 500 + "\n}\n", 1, "nest deeper"),
    ("dependencies {\n  implementation 'not a coordinate'\n}\n", 2, "not group:name"),
    ("dependencies {\n  implementation 'bad group!:x:1'\n}\n", 2, "Maven coordinate"),
])
def test_what_it_cannot_read_is_a_warning_at_its_line(tmp_path, text, line, words):
    (tmp_path / "build.gradle").write_text(text)
    result = run(tmp_path / "build.gradle", tmp_path)
    assert [(p.code, p.line) for p in result.problems] == [("bad-gradle", line)], result.problems
    assert words in result.problems[0].message
    assert not [e for e in result.edges if "plugin" not in e.qualifiers]


def test_hostile_files_never_crash(tmp_path):
    cases = {
        "quotes": "dependencies { implementation 'a:b:1\n\"\"\"\n}\n''' \\",
        "braces": "}}}{{{ dependencies {{{{ ))) ((( ]]]",
        "binaryish": "dependencies {\x00\x01 implementation '\x7f:\x00:1'\n}",
        "interp": 'dependencies {\n  implementation "${"${"${x}"}"}:a:1"\n}\n',
        "empty": "",
    }
    for name, text in cases.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "build.gradle.kts").write_text(text)
        result = run(folder / "build.gradle.kts", folder)
        assert result.nodes or [p.code for p in result.problems] == ["bad-input"], name
        assert len(result.nodes) + len(result.edges) <= 50_000
        assert all(p.line is None or p.line >= 1 for p in result.problems)


@pytest.mark.slow
def test_a_huge_dependencies_block_is_bounded(tmp_path):
    path = tmp_path / "build.gradle.kts"
    path.write_text("dependencies {\n" + "  implementation(\"g:a:1\")\n" * 60000 + "}\n")
    result = run(path, tmp_path)
    assert len(result.nodes) + len(result.edges) == 50_000
    assert [(p.code, p.line) for p in result.problems] == [("too-many-records", 50_001)]


def test_an_unresolved_version_keeps_the_dependency_and_says_so(tmp_path):
    write(tmp_path, {"settings.gradle": "rootProject.name='r'\ninclude ':sub'\n",
                     "build.gradle": "buildscript {\n  ext { agp = '8.1.0' }\n  dependencies {\n"
                                     "    classpath \"com.android.tools.build:gradle:$agp\"\n"
                                     "  }\n}\next.kotlin_version = '1.9.0'\n",
                     "sub/build.gradle.kts": (
                         "dependencies {\n"
                         "    implementation(\"org.jetbrains.kotlin:kotlin-stdlib:"
                         "$kotlin_version\")\n"
                         "    \"implementation\"(\"com.squareup.okio:okio:3.9.0\")\n"
                         "    add(\"testImplementation\", \"junit:junit:4.13.2\")\n"
                         "    implementation(\"a.b:c:$elsewhere\") { because(\"x\") }\n"
                         "    implementation(\"g:n:1\"); runtimeOnly(\"g:m:2\")\n}\n")})
    root = run(tmp_path / "build.gradle", tmp_path)
    assert [(e.object, e.qualifiers) for e in root.edges] == [
        ("pkg:maven/com.android.tools.build/gradle", ("configuration:classpath", "version:8.1.0"))]
    sub = run(tmp_path / "sub" / "build.gradle.kts", tmp_path)
    assert [(e.line, e.object, e.qualifiers[-1]) for e in sub.edges] == [
        (2, "pkg:maven/org.jetbrains.kotlin/kotlin-stdlib", "version:1.9.0"),  # the root's ext
        (3, "pkg:maven/com.squareup.okio/okio", "version:3.9.0"),
        (4, "pkg:maven/junit/junit", "version:4.13.2"),
        (5, "pkg:maven/a.b/c", "configuration:implementation"),
        (6, "pkg:maven/g/n", "version:1"), (6, "pkg:maven/g/m", "version:2")]
    assert [(p.line, p.message) for p in sub.problems] == [
        (5, "cannot resolve 'elsewhere' in '$elsewhere'; the version is left out")]


def test_an_included_build_reads_the_catalog_its_settings_names(tmp_path):
    write(tmp_path, {
        "gradle/libs.versions.toml": ('[plugins]\nandroid-lint = { id = "com.android.lint", '
                                      'version = "8.5.0" }\n'),
        "build-logic/settings.gradle.kts": ('dependencyResolutionManagement {\n'
                                            '  versionCatalogs {\n    create("libs") {\n'
                                            '      from(files("../gradle/libs.versions.toml"))\n'
                                            '    }\n  }\n}\n'),
        "build-logic/build.gradle.kts": ("plugins {\n  `kotlin-dsl`\n  application\n"
                                         "  alias(libs.plugins.android.lint)\n}\n")})
    result = run(tmp_path / "build-logic" / "build.gradle.kts", tmp_path)
    assert result.problems == []  # core plugins are no dependencies, and no warning either
    assert [(e.object, e.line, e.qualifiers) for e in result.edges] == [
        ("pkg:maven/com.android.lint/com.android.lint.gradle.plugin", 4,
         ("plugin", "version:8.5.0"))]


def test_a_subproject_folder_that_is_a_symlink(tmp_path):
    # its resolved path is outside the root the settings file is in: still the subproject
    write(tmp_path, {"elsewhere/build.gradle": "dependencies {\n implementation 'a:b:1'\n}\n",
                     "scan/settings.gradle": "rootProject.name='s'\ninclude ':sub'\n"})
    (tmp_path / "scan" / "sub").symlink_to(tmp_path / "elsewhere")
    root = tmp_path / "scan"
    result = EX.extract(SourceFile(root / "sub" / "build.gradle", "sub/build.gradle", root),
                        Context(SCHEMA, [root]))
    assert result.problems == [] and result.nodes[0].id == "gradle:s:sub"
    assert [e.object for e in result.edges] == ["pkg:maven/a/b"]
