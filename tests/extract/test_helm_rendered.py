"""Rendered Helm output of a real repository (`helm template` of the grafana chart, with the
project's own manifests appended; fixtures/sources/helm-rendered, origin in
fixtures/sources/SOURCES.md) through the Kubernetes extractor."""

from conftest import REPO

from kgbuild.extract.manifests.kubernetes import KubernetesExtractor
from kgbuild.extract.records import Context, SourceFile
from kgbuild.schema.loader import load_schema

SOURCES = REPO / "fixtures" / "sources"
PATH = SOURCES / "helm-rendered" / "makerspace-grafana" / "rendered.yml"


def run():
    ex = KubernetesExtractor()
    assert ex.claims(PATH, PATH.read_bytes()[:65536])
    return ex.extract(SourceFile(PATH, PATH.relative_to(SOURCES).as_posix(), SOURCES),
                      Context(load_schema(), [SOURCES]))


def test_source_comments_become_the_chart_and_template_of_each_object():
    result = run()
    assert result.problems == []
    text = PATH.read_text().split("\n")
    charted = {e.subject: e for e in result.edges if e.predicate == "partOf"}
    # the objects under a "# Source: grafana/templates/<t>.yaml" comment of a kind it reads
    assert {s: e.qualifiers for s, e in charted.items()} == {
        "k8s:grafana/serviceaccount/grafana": ("helm", "template:templates/serviceaccount.yaml"),
        "k8s:grafana/configmap/grafana-config-dashboards":
            ("helm", "template:templates/configmap-dashboard-provider.yaml"),
        "k8s:grafana/configmap/grafana": ("helm", "template:templates/configmap.yaml"),
        "k8s:grafana/persistentvolumeclaim/grafana": ("helm", "template:templates/pvc.yaml"),
        "k8s:grafana/service/grafana": ("helm", "template:templates/service.yaml"),
        "k8s:grafana/deployment/grafana": ("helm", "template:templates/deployment.yaml")}
    for edge in charted.values():
        assert edge.object == "helm:grafana"
        assert text[edge.line - 1].startswith("kind: ")
        assert edge.evidence in text[:edge.line]  # the comment above the object
        assert edge.evidence.startswith("# Source: grafana/templates/")
    # the manifests appended after the chart's output belong to no chart
    assert "k8s:grafana/secret/admin-creds" in {n.id for n in result.nodes}
    assert "k8s:grafana/secret/admin-creds" not in charted


def test_service_routes_to_the_workload_that_needs_its_config():
    result = run()
    edges = {(e.subject, e.predicate, e.object): e for e in result.edges}
    route = edges[("k8s:grafana/service/grafana", "routesTo", "k8s:grafana/deployment/grafana")]
    assert route.line == 182 and route.evidence.startswith("selector: ")
    me = "k8s:grafana/deployment/grafana"
    needs = {(o, e.qualifiers) for (s, p, o), e in edges.items() if s == me and p == "dependsOn"}
    assert {("k8s:grafana/serviceaccount/grafana", ("serviceAccount",)),
            ("k8s:grafana/persistentvolumeclaim/grafana", ("volume",)),
            ("k8s:grafana/secret/admin-creds", ("env",)),
            ("image:docker.io/grafana/grafana", ("image", "container:grafana"))} <= needs
    image = next(e for e in result.edges if e.object == "image:docker.io/grafana/grafana")
    assert 'image: "docker.io/grafana/grafana:11.6.0"' in PATH.read_text().split("\n")[
        image.line - 1]
    # its IngressRoute (Traefik's CRD) is not a kind this extractor reads: no edge, no error
    assert not [e for e in result.edges if "ingressroute" in e.subject]


def test_ingress_service_workload_chain_of_a_subchart(tmp_path):
    # the shape `helm template shop` writes for a subchart's objects (generated: no real
    # rendered output with an Ingress was found, see SOURCES.md)
    path = tmp_path / "rendered.yaml"
    path.write_text(
        "---\n# Source: shop/charts/web/templates/service.yaml\napiVersion: v1\nkind: Service\n"
        "metadata:\n  name: web\nspec:\n  selector:\n    app: web\n"
        "---\n# Source: shop/charts/web/templates/deployment.yaml\napiVersion: apps/v1\n"
        "kind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    metadata:\n"
        "      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n"
        "        image: shop/web:1.0\n"
        "---\n# Source: shop/templates/ingress.yaml\napiVersion: networking.k8s.io/v1\n"
        "kind: Ingress\nmetadata:\n  name: shop\nspec:\n  rules:\n  - http:\n      paths:\n"
        "      - path: /\n        pathType: Prefix\n        backend:\n          service:\n"
        "            name: web\n            port:\n              number: 80\n")
    ex = KubernetesExtractor()
    result = ex.extract(SourceFile(path, "rendered.yaml", tmp_path),
                        Context(load_schema(), [tmp_path]))
    assert result.problems == []
    got = {(e.subject, e.predicate, e.object, e.qualifiers) for e in result.edges}
    assert {("k8s:default/ingress/shop", "routesTo", "k8s:default/service/web", ()),
            ("k8s:default/service/web", "routesTo", "k8s:default/deployment/web", ()),
            ("k8s:default/service/web", "partOf", "helm:web",
             ("helm", "template:templates/service.yaml")),
            ("k8s:default/ingress/shop", "partOf", "helm:shop",
             ("helm", "template:templates/ingress.yaml"))} <= got
