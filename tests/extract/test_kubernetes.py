"""Kubernetes manifests and Helm charts: real files from public projects (fixtures/sources,
origins in fixtures/sources/SOURCES.md) and generated hostile ones."""

from pathlib import Path

import pytest
from conftest import REPO

from kgbuild.extract.manifests.helm import HelmChartExtractor
from kgbuild.extract.manifests.kubernetes import KubernetesExtractor, image_id
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

SOURCES = REPO / "fixtures" / "sources"
K8S = SOURCES / "kubernetes"
EX, HELM = KubernetesExtractor(), HelmChartExtractor()
SCHEMA = load_schema()


def run(path: Path, ex=EX, root: Path = SOURCES):
    assert ex.claims(path, path.read_bytes()[:65536]), path
    return ex.extract(SourceFile(path, path.relative_to(root).as_posix(), root),
                      Context(SCHEMA, [root]))


def triples(result) -> set[tuple[str, str, str]]:
    return {(e.subject, e.predicate, e.object) for e in result.edges}


def line_of(path: Path, n: int) -> str:
    return path.read_text().split("\n")[n - 1]


def test_microservices_demo_frontend():
    path = K8S / "microservices-demo" / "frontend.yaml"
    result = run(path)
    assert result.problems == []
    nodes = {n.id: n for n in result.nodes}
    assert {n: nodes[n].type for n in nodes} == {
        "k8s:default/deployment/frontend": "Component",
        "k8s:default/service/frontend": "Service",
        "k8s:default/service/frontend-external": "Service",
        "k8s:default/serviceaccount/frontend": "Resource"}
    assert nodes["k8s:default/deployment/frontend"].attributes["image"] == ["frontend"]
    found = triples(result)
    deployment = "k8s:default/deployment/frontend"
    assert {("k8s:default/service/frontend", "routesTo", deployment),
            ("k8s:default/service/frontend-external", "routesTo", deployment),
            (deployment, "dependsOn", "k8s:default/serviceaccount/frontend"),
            (deployment, "dependsOn", "image:docker.io/library/frontend")} <= found
    # the addresses the pod is given: the services it calls (defined in the other files)
    calls = {o.rsplit("/", 1)[1] for s, p, o in found if p == "dependsOn" and "/service/" in o}
    assert calls == {"productcatalogservice", "currencyservice", "cartservice",
                     "recommendationservice", "shippingservice", "checkoutservice", "adservice",
                     "shoppingassistantservice"}
    for e in result.edges:  # every edge at the line that states it
        assert e.evidence and e.evidence.split(":")[0].strip("- ") in line_of(path, e.line)
        if "env-address" in e.qualifiers:
            assert e.confidence == 0.7 and e.evidence.startswith("value: ")


def test_podinfo_kustomize_base_one_object_a_file():
    base = K8S / "podinfo-database"
    primary = run(base / "service-primary.yaml")
    assert triples(primary) == {("k8s:default/service/database-primary", "routesTo",
                                 "k8s:default/statefulset/database-primary")}
    assert base / "statefulset-primary.yaml" in primary.depends
    [edge] = primary.edges
    assert edge.line == 8 and edge.evidence == "selector: app.kubernetes.io/name: database-primary"
    sts = run(base / "statefulset-primary.yaml")
    assert {("k8s:default/statefulset/database-primary", "dependsOn", o) for o in (
        "k8s:default/serviceaccount/database", "k8s:default/persistentvolumeclaim/database-primary",
        "image:ghcr.io/stefanprodan/podinfo")} == triples(sts)
    cron = run(base / "cronjob-backup-daily.yaml")
    assert ("k8s:default/cronjob/backup-daily", "dependsOn",
            "k8s:default/configmap/backup-script") in triples(cron)
    assert {q for e in cron.edges for q in e.qualifiers} >= {"volume", "serviceAccount", "image"}
    assert [n.type for n in run(base / "pvc-primary.yaml").nodes] == ["Resource"]


def test_ingress_routes_and_flow_style_yaml():
    fanout = run(K8S / "k8s-website" / "simple-fanout-example.yaml")
    assert triples(fanout) == {("k8s:default/ingress/simple-fanout-example", "routesTo",
                                f"k8s:default/service/{s}") for s in ("service1", "service2")}
    assert sorted(e.line for e in fanout.edges) == [17, 28]  # the "name:" lines
    tls = run(K8S / "k8s-website" / "tls-example-ingress.yaml")
    assert ("k8s:default/ingress/tls-example-ingress", "dependsOn",
            "k8s:default/secret/testsecret-tls") in triples(tls)
    app = run(K8S / "k8s-website" / "nginx-secure-app.yaml")
    assert {("k8s:default/service/my-nginx", "routesTo", "k8s:default/deployment/my-nginx"),
            ("k8s:default/deployment/my-nginx", "dependsOn", "k8s:default/secret/nginxsecret"),
            ("k8s:default/deployment/my-nginx", "dependsOn", "k8s:default/configmap/nginxconfigmap"),
            ("k8s:default/deployment/my-nginx", "dependsOn", "image:docker.io/bprashanth/nginxhttps")
            } == triples(app)
    route = run(K8S / "k8s-website" / "httproute.yaml")
    assert triples(route) == {("k8s:default/httproute/example-httproute", "routesTo",
                               "k8s:default/service/example-svc")}


def test_image_ids_follow_docker_normalisation():
    assert image_id("nginx:1.25") == ("image:docker.io/library/nginx", "nginx")
    assert image_id("bitnami/redis@sha256:abc") == ("image:docker.io/bitnami/redis", "bitnami/redis")
    assert image_id("localhost:5000/app:v1")[0] == "image:localhost:5000/app"
    assert image_id("registry.k8s.io/ingress-nginx/controller:v1.11.2@sha256:d5f8")[0] == \
        "image:registry.k8s.io/ingress-nginx/controller"
    assert image_id("{{ .Values.image }}") is None and image_id("") is None


def test_rendered_helm_output_ties_objects_to_their_chart(tmp_path):
    # the shape `helm template` writes: a "# Source:" comment before each document
    path = tmp_path / "rendered.yaml"
    path.write_text("---\n# Source: shop/charts/redis/templates/service.yaml\napiVersion: v1\n"
                    "kind: Service\nmetadata:\n  name: shop-redis\nspec:\n  selector:\n"
                    "    app: redis\n---\n# Source: shop/templates/deployment.yaml\n"
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shop\nspec:\n"
                    "  template:\n    metadata:\n      labels:\n        app: shop\n    spec:\n"
                    "      containers:\n      - name: web\n        image: shop:1.0\n        env:\n"
                    "        - name: REDIS_HOST\n          value: shop-redis\n")
    result = run(path, root=tmp_path)
    assert {("k8s:default/service/shop-redis", "partOf", "helm:redis"),
            ("k8s:default/deployment/shop", "partOf", "helm:shop"),
            ("k8s:default/deployment/shop", "dependsOn", "k8s:default/service/shop-redis")
            } <= triples(result)


def test_helm_chart_dependencies():
    result = run(SOURCES / "helm" / "bitnami-wordpress" / "Chart.yaml", HELM)
    assert [(n.id, n.attributes["version"]) for n in result.nodes] == [("helm:wordpress", "17.0.0")]
    assert [(e.object, e.line, e.qualifiers) for e in result.edges] == [
        ("helm:memcached", 11, ("condition:memcached.enabled",)),
        ("helm:mariadb", 15, ("condition:mariadb.enabled",)),
        ("helm:common", 18, ())]
    assert result.edges[0].evidence == ("name: memcached, version: 6.x.x, repository: "
                                        "oci://registry-1.docker.io/bitnamicharts")
    plain = run(SOURCES / "helm" / "microservices-demo" / "Chart.yaml", HELM)
    assert [n.id for n in plain.nodes] == ["helm:onlineboutique"] and plain.edges == []


def test_helm_templates_are_not_claimed(tmp_path):
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 1.0.0\n")
    (tmp_path / "templates").mkdir()
    tpl = tmp_path / "templates" / "deployment.yaml"
    tpl.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
    assert not EX.claims(tpl, tpl.read_bytes())
    assert not EX.claims(tmp_path / "Chart.yaml", (tmp_path / "Chart.yaml").read_bytes())


@pytest.mark.parametrize("text, code, line", [
    ("apiVersion: v1\nkind: Service\nmetadata: {name: [x]}\n", "bad-k8s-object", 3),
    ("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\nspec:\n  selector: [app]\n",
     "bad-k8s-object", 6),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Values.x }}\n", "bad-input", 4),
    ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: 7\n"
     "    envFrom:\n    - configMapRef: {name: [1]}\n", "bad-k8s-object", 9),
    ("apiVersion: v1\nkind: ConfigMap\n---\n- a\n---\napiVersion: v1\nkind: [x\n", "bad-input", 8),
])
def test_hostile_objects_are_reported_with_their_line(tmp_path, text, code, line):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    result = run(path, root=tmp_path)
    assert (code, line) in {(p.code, p.line) for p in result.problems}, result.problems


@pytest.mark.slow
def test_a_huge_stream_is_bounded(tmp_path):
    many = tmp_path / "many.yaml"
    many.write_text("".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n"
                            for i in range(60_000)))
    result = run(many, root=tmp_path)
    assert len(result.nodes) + len(result.edges) == 50_000
    assert [p.code for p in result.problems] == ["too-many-records"]


def test_deep_binary_and_bomb_streams_are_refused_with_their_line(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec: " + "[" * 5000
                    + "]" * 5000 + "\n")
    assert {p.code for p in run(deep, root=tmp_path).problems} == {"bad-input"}
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"apiVersion: v1\nkind: Pod\n\x00\x01\x02")
    assert [p.line for p in run(binary, root=tmp_path).problems] == [3]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
                    + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                              for p, c in zip("abcdefgh", "bcdefghi")))
    assert {p.code for p in run(bomb, root=tmp_path).problems} == {"bad-input"}
