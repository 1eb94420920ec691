"""Kubernetes manifests: workloads, Services, Ingresses and what the pods reference.

Any YAML (or JSON) stream whose documents have a top-level ``apiVersion`` and ``kind`` is
read, one object per document (``kind: List`` items too), so ``kubectl get -o yaml`` output
and ``helm template`` output are read like hand-written manifests. Objects of kinds not
listed here (CRDs, RBAC, Namespaces) are skipped silently.

IDs are ``k8s:<namespace>/<kind>/<name>`` (kind lowercased, namespace ``default`` when the
object names none), so objects of one namespace meet across files. What is read:

* workloads (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod,
  ReplicationController) are Components; each container's image is a Component
  ``image:<registry>/<repository>`` (Docker's normalisation: ``nginx:1.25`` ->
  ``image:docker.io/library/nginx``, tag and digest dropped, kept in the workload's ``image``
  attribute) that the workload ``dependsOn`` (qualifiers ``image``, ``container:<name>``,
  ``init`` for init containers);
* ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims are Resources that a
  workload ``dependsOn`` when its pod names them (qualifier ``env``, ``envFrom``,
  ``volume``, ``serviceAccount``, ``imagePullSecret``); only names are read, never a value;
* a Service is a Service that ``routesTo`` each workload of the same namespace whose pod
  labels its selector matches: in the same stream, or (a stream without workloads, as
  Kustomize bases keep one object a file) in the manifests beside it; an Ingress (``networking.k8s.io/v1`` and the
  older ``serviceName`` form), a Gateway API HTTPRoute/GRPCRoute and an OpenShift Route are
  Resources that ``routesTo`` their backend Services (an Ingress ``dependsOn`` its TLS
  Secrets);
* an environment value that addresses a Service (``cartservice:7070``,
  ``http://api.shop.svc.cluster.local``) is a ``dependsOn`` edge (qualifier
  ``env-address``): confidence 0.9 when the stream defines that Service, 0.7 when only the
  variable's name says it is an address (``*_ADDR``, ``*_HOST``, ``*_URL``, ...);
* rendered Helm output: every object below a ``# Source: <chart>/templates/...`` comment
  is ``partOf`` the chart ``helm:<chart>`` (a subchart's objects: the subchart), qualified
  ``template:<path in the chart>``, the comment as its evidence.

Helm templates themselves (``templates/*.yaml`` beside a ``Chart.yaml``) are not manifests
and are not claimed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ...errors import InputError, Problem
from ...io.text import brief, read_text, split_lines
from ...io.yamlfile import YamlSource, YList, YMap, load_yaml
from ..records import Context, EdgeRecord, Extraction, NodeRecord, SourceFile
from ..registry import register
from .packages import input_problem

WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "Pod",
             "ReplicationController", "DeploymentConfig"}
RESOURCES = {"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"}
ROUTES = {"Ingress", "HTTPRoute", "GRPCRoute", "Route"}
MAX_SIBLINGS = 64  # manifests beside a file read to match its Services' selectors
MAX_SIBLING_BYTES = 4 << 20
# a top-level key, or one at the start of a line in a flow mapping ({ apiVersion: "v1", ...)
_HEAD_API = re.compile(rb"(?m)^[ \t{]*[\"']?apiVersion[\"']?\s*:\s*\S")
_HEAD_KIND = re.compile(rb"(?m)^[ \t{]*[\"']?kind[\"']?\s*:\s*\S")
_SOURCE = re.compile(r"^#\s*Source:\s*(\S+)")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# host[:port] or scheme://host[:port][/...], host a Service name, optionally qualified
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?([a-z0-9][-a-z0-9]{0,62})"
                      r"(?:\.([a-z0-9][-a-z0-9]{0,62})(?:\.svc(?:\.cluster\.local)?)?)?"
                      r"(?::(\d{1,5}))?(?:/\S*)?$")
_ADDRESS_VAR = re.compile(r"(?:_|^)(ADDR|ADDRESS|HOST|HOSTNAME|URL|URI|ENDPOINT|SERVICE|SVC)$",
                          re.I)


def object_id(namespace: str, kind: str, name: str) -> str:
    return f"k8s:{namespace}/{kind.lower()}/{name}"


def image_id(image: str) -> tuple[str, str] | None:
    """``(ID, label)`` of a container image reference, tag and digest dropped, registry and
    repository normalised as Docker does; None for a reference that is not one."""
    ref = image.strip().split("@", 1)[0]
    if not ref or any(c.isspace() for c in ref) or "$" in ref or "{" in ref:
        return None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:  # a tag
        ref = ref[:colon]
    parts = ref.split("/")
    if not all(parts):
        return None
    if len(parts) == 1 or not ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = ["docker.io", *(["library"] if len(parts) == 1 else []), *parts]
    label = ref if not ref.startswith("docker.io/") else ref[len("docker.io/"):]
    return "image:" + "/".join(parts).lower(), label.removeprefix("library/")


class KubernetesExtractor:
    name = "kubernetes"
    version = 1
    emits = frozenset({"Component", "Service", "Resource", "dependsOn", "routesTo", "partOf"})
    ownable = False  # manifests deploy images (often third-party); the repository's own code
    # has its own manifest, which CODEOWNERS owns

    def claims(self, path: Path, head: bytes) -> bool:
        suffix = path.suffix.lower()
        if suffix not in (".yaml", ".yml", ".json"):
            return False
        if path.parent.name == "templates" and (path.parent.parent / "Chart.yaml").is_file():
            return False  # a Helm template, not a manifest
        if suffix == ".json":
            return b'"apiVersion"' in head and b'"kind"' in head and b"bomFormat" not in head
        return bool(_HEAD_API.search(head) and _HEAD_KIND.search(head))

    def extract(self, src: SourceFile, ctx: Context) -> Extraction:
        try:
            text = read_text(src.path, ctx.max_file_bytes, src.doc_id)
        except InputError as exc:
            return Extraction(problems=[input_problem(exc)])
        try:
            docs = load_yaml(text, src.doc_id, per_document=True)
        except InputError as exc:
            problem = input_problem(exc)
            if "{{" in text:
                problem = replace(problem, message=problem.message + " (a Helm template? render "
                                  "it first: helm template ... > rendered.yaml)")
            return Extraction(problems=[problem])
        return _Stream(src, ctx, text, docs).read()


class _Stream:
    def __init__(self, src: SourceFile, ctx: Context, text: str, docs: list):
        self.src, self.ctx, self.docs = src, ctx, docs
        self.doc_id = src.doc_id
        self.out = Extraction()
        self.sources = [(n, m.group(1)) for n, line in enumerate(split_lines(text), 1)
                        if line.startswith("#") and (m := _SOURCE.match(line))]
        self.objects: list[tuple[YMap, str, str, str, YamlSource, tuple[str, str] | None]] = []

    def warn(self, message: str, line: int | None) -> None:
        self.out.problems.append(Problem("warning", "bad-k8s-object", message, self.doc_id, line))

    def read(self) -> Extraction:
        previous = 0
        for doc in self.docs:
            if doc.error is not None:
                self.out.problems.append(Problem("error", "bad-input", doc.error.message,
                                                 self.doc_id, doc.error.line))
                continue
            chart = self._chart(previous, doc.line)
            previous = doc.line
            if isinstance(doc.data, YMap) and doc.data.get("kind") == "List" \
                    and isinstance(doc.data.get("items"), YList):
                for item in doc.data["items"]:
                    self._collect(item, doc.source, chart)
            else:
                self._collect(doc.data, doc.source, chart)
        services: dict[tuple[str, str], str] = {}
        for obj, kind, ns, name, _, _ in self.objects:
            if kind == "Service":
                services[(ns, name)] = object_id(ns, kind, name)
        self.workloads = [(kind, ns, name, _pod_labels(obj, kind))
                          for obj, kind, ns, name, _, _ in self.objects if kind in WORKLOADS]
        if any(kind == "Service" for _, kind, *_ in self.objects) and not self.workloads:
            self._siblings(services)  # a Kustomize base: one object a file
        for obj, kind, ns, name, source, chart in self.objects:
            if self.out.full(self.doc_id, obj.line):
                break
            self._object(obj, kind, ns, name, source, chart, services)
        return self.out

    def _siblings(self, services: dict) -> None:
        """The workloads and Services of the other manifests in this file's folder (each
        object in its own file, as Kustomize bases are written), so that a Service's
        selector finds its workloads; every file looked at becomes a dependency."""
        try:
            paths = sorted(p for p in self.src.path.parent.iterdir()
                           if p.suffix.lower() in (".yaml", ".yml") and p != self.src.path)
        except OSError:
            return
        for path in paths[:MAX_SIBLINGS]:
            self.out.depends.append(path)
            try:
                text = read_text(path, min(self.ctx.max_file_bytes, MAX_SIBLING_BYTES), path.name)
                if not (_HEAD_API.search(text[:65536].encode()) and "kind" in text):
                    continue
                docs = load_yaml(text, path.name, per_document=True)
            except InputError:
                continue  # its own extraction reports it
            for doc in docs:
                obj = doc.data
                if not isinstance(obj, YMap) or not isinstance(obj.get("metadata"), YMap):
                    continue
                kind, meta = obj.get("kind"), obj["metadata"]
                name, ns = meta.get("name"), meta.get("namespace", "default")
                if not isinstance(name, str) or not isinstance(ns, str):
                    continue
                if kind in WORKLOADS:
                    self.workloads.append((kind, ns, name.strip(), _pod_labels(obj, kind)))
                elif kind == "Service":
                    services[(ns, name.strip())] = object_id(ns, kind, name.strip())

    def _chart(self, after: int, before: int) -> tuple[str, str] | None:
        """The chart and template path of the ``# Source:`` comment between two document
        starts, if any."""
        found = None
        for line, path in self.sources:
            if after < line <= before:
                found = path
        if not found:
            return None
        parts = found.split("/")
        if "templates" in parts[1:]:
            at = len(parts) - 1 - parts[::-1].index("templates")
            return (parts[at - 1], found) if at >= 1 else None
        return None

    def _collect(self, obj: object, source: YamlSource, chart: tuple[str, str] | None) -> None:
        if not isinstance(obj, YMap):
            if obj is not None:
                self.warn(f"a document that is {brief(obj, 40)}, not an object; skipped",
                          getattr(obj, "line", None))
            return
        kind, api = obj.get("kind"), obj.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api, str):
            self.warn("an object without apiVersion and kind strings; skipped", obj.line)
            return
        if kind not in WORKLOADS | RESOURCES | ROUTES | {"Service"}:
            return
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, YMap) else None
        if not isinstance(name, str) or not name.strip() or "$" in name or "{" in name:
            self.warn(f"{kind} without a metadata.name string; skipped",
                      meta.line_of("name") if isinstance(meta, YMap) else obj.line_of("kind"))
            return
        ns = meta.get("namespace", "default")
        if not isinstance(ns, str) or not _DNS_LABEL.match(ns):
            self.warn(f"{kind} {brief(name)}: namespace {brief(ns)} is not a namespace name; "
                      f"'default' used", meta.line_of("namespace"))
            ns = "default"
        self.objects.append((obj, kind, ns, name.strip(), source, chart))

    def _object(self, obj: YMap, kind: str, ns: str, name: str, source: YamlSource,
                chart: tuple[str, str] | None, services: dict) -> None:
        meta = obj["metadata"]
        me = object_id(ns, kind, name)
        node_type = "Component" if kind in WORKLOADS else "Service" if kind == "Service" \
            else "Resource"
        attrs: dict = {"namespace": ns, "specType": kind}
        pod = _pod_spec(obj, kind) if kind in WORKLOADS else None
        if pod is not None:
            images = [c.get("image") for c in _containers(pod)
                      if isinstance(c.get("image"), str)]
            if images:
                attrs["image"] = images
        attrs = {k: v for k, v in attrs.items() if k in self.ctx.schema.attributes}
        self.out.nodes.append(NodeRecord(me, node_type, name, line=meta.line_of("name"),
                                         attributes=attrs))
        if chart:
            name, template = chart
            within = template.split(f"{name}/", 1)[-1] if f"{name}/" in template else template
            self.out.edges.append(EdgeRecord(me, "partOf", f"helm:{name}",
                                             line=obj.line_of("kind"),
                                             evidence=f"# Source: {template}",
                                             subject_type=node_type, object_type="Component",
                                             object_label=name,
                                             qualifiers=("helm", f"template:{within}")))
        if pod is not None:
            self._pod(me, ns, pod, source, services)
        elif kind == "Service":
            self._service(me, obj, ns, source)
        elif kind in ROUTES:
            self._route(me, obj, kind, ns, source)

    # -- workloads ---------------------------------------------------------------------------
    def _edge(self, subject: str, target: str, target_type: str, label: str, line: int,
              evidence: str | None, qualifiers: tuple[str, ...], subject_type: str = "Component",
              predicate: str = "dependsOn", confidence: float = 1.0) -> None:
        if self.out.full(self.doc_id, line):
            return
        self.out.edges.append(EdgeRecord(subject, predicate, target, line=line,
                                         evidence=evidence, subject_type=subject_type,
                                         object_type=target_type, object_label=label,
                                         qualifiers=qualifiers, confidence=confidence))

    def _pod(self, me: str, ns: str, pod: YMap, source: YamlSource, services: dict) -> None:
        def ref(kind: str, container: YMap, key: str, qualifier: str) -> None:
            value = container.get(key)
            if isinstance(value, str) and value.strip() and "{" not in value:
                self._edge(me, object_id(ns, kind, value.strip()),
                           "Service" if kind == "Service" else "Resource", value.strip(),
                           container.line_of(key), source.evidence(container, key), (qualifier,))
            elif value is not None:
                self.warn(f"{key} {brief(value)} is not a name; skipped", container.line_of(key))

        for key in ("serviceAccountName", "serviceAccount"):
            if key in pod:
                ref("ServiceAccount", pod, key, "serviceAccount")
                break
        for i, secret in enumerate(_items(pod.get("imagePullSecrets"))):
            if isinstance(secret, YMap):
                ref("Secret", secret, "name", "imagePullSecret")
        for volume in _items(pod.get("volumes")):
            if not isinstance(volume, YMap):
                continue
            for key, kind, field in (("configMap", "ConfigMap", "name"),
                                     ("secret", "Secret", "secretName"),
                                     ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName")):
                if isinstance(volume.get(key), YMap):
                    ref(kind, volume[key], field, "volume")
            projected = volume.get("projected")
            for item in _items(projected.get("sources") if isinstance(projected, YMap) else None):
                if isinstance(item, YMap):
                    for key, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                        if isinstance(item.get(key), YMap):
                            ref(kind, item[key], "name", "volume")
        for container, init in _containers(pod, with_init=True):
            cname = container.get("name")
            image = container.get("image")
            if isinstance(image, str):
                found = image_id(image)
                if found:
                    qualifiers = ("image", f"container:{cname}" if isinstance(cname, str) else "",
                                  "init" if init else "")
                    self._edge(me, found[0], "Component", found[1], container.line_of("image"),
                               source.evidence(container, "image"), tuple(q for q in qualifiers if q))
                else:
                    self.warn(f"image {brief(image)} is not an image reference; skipped",
                              container.line_of("image"))
            for env_from in _items(container.get("envFrom")):
                if isinstance(env_from, YMap):
                    for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                        if isinstance(env_from.get(key), YMap):
                            ref(kind, env_from[key], "name", "envFrom")
            for env in _items(container.get("env")):
                if not isinstance(env, YMap):
                    continue
                source_of = env.get("valueFrom")
                if isinstance(source_of, YMap):
                    for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                        if isinstance(source_of.get(key), YMap):
                            ref(kind, source_of[key], "name", "env")
                elif isinstance(env.get("value"), str):
                    self._address(me, ns, env, source, services)

    def _address(self, me: str, ns: str, env: YMap, source: YamlSource, services: dict) -> None:
        value, var = env["value"].strip(), env.get("name")
        m = _ADDRESS.match(value)
        if not m or m.group(1) in ("localhost", "0", "127") or m.group(1).isdigit():
            return
        host, target_ns = m.group(1), m.group(2) or ns
        if m.group(2) and ".svc" not in value:  # api.shop: a domain name, not a Service
            return
        defined = (target_ns, host) in services
        named = isinstance(var, str) and _ADDRESS_VAR.search(var)
        if not defined and not (named and (m.group(3) or "://" in value)):
            return
        self._edge(me, object_id(target_ns, "Service", host), "Service", host,
                   env.line_of("value"), source.evidence(env, "value"), ("env-address",),
                   confidence=0.9 if defined else 0.7)

    # -- services and routes -----------------------------------------------------------------
    def _service(self, me: str, obj: YMap, ns: str, source: YamlSource) -> None:
        spec = obj.get("spec")
        selector = spec.get("selector") if isinstance(spec, YMap) else None
        if selector is None:
            return
        if not isinstance(selector, YMap) or not all(
                isinstance(k, str) and isinstance(v, (str, int, bool)) for k, v in selector.items()):
            self.warn("Service selector is not a mapping of labels; skipped",
                      spec.line_of("selector"))
            return
        wanted = {k: _label(v) for k, v in selector.items()}
        if not wanted:
            return
        evidence = "selector: " + ", ".join(f"{k}: {v}" for k, v in wanted.items())
        for kind, other_ns, name, labels in self.workloads:
            if other_ns != ns:
                continue
            if all(labels.get(k) == v for k, v in wanted.items()):
                self._edge(me, object_id(ns, kind, name), "Component", name,
                           spec.line_of("selector"), evidence[:300], (), "Service", "routesTo")

    def _route(self, me: str, obj: YMap, kind: str, ns: str, source: YamlSource) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, YMap):
            return
        backends: list[tuple[YMap, str]] = []  # (mapping holding the name, key)
        if kind == "Ingress":
            for holder in [spec, *[p for r in _items(spec.get("rules")) if isinstance(r, YMap)
                                   for p in _items((r.get("http") or {}).get("paths")
                                                   if isinstance(r.get("http"), YMap) else None)
                                   if isinstance(p, YMap)]]:
                for key in ("backend", "defaultBackend"):
                    backend = holder.get(key)
                    if isinstance(backend, YMap):
                        service = backend.get("service")
                        if isinstance(service, YMap):
                            backends.append((service, "name"))
                        elif "serviceName" in backend:
                            backends.append((backend, "serviceName"))
            for tls in _items(spec.get("tls")):
                if isinstance(tls, YMap) and isinstance(tls.get("secretName"), str):
                    self._edge(me, object_id(ns, "Secret", tls["secretName"]), "Resource",
                               tls["secretName"], tls.line_of("secretName"),
                               source.evidence(tls, "secretName"), ("tls",), "Resource")
        elif kind == "Route":
            to = spec.get("to")
            if isinstance(to, YMap) and to.get("kind", "Service") == "Service":
                backends.append((to, "name"))
        else:  # Gateway API routes
            for rule in _items(spec.get("rules")):
                for ref in _items(rule.get("backendRefs") if isinstance(rule, YMap) else None):
                    if isinstance(ref, YMap) and ref.get("kind", "Service") == "Service" \
                            and ref.get("group", "") in ("", None):
                        backends.append((ref, "name"))
        for holder, key in backends:
            name = holder.get(key)
            if not isinstance(name, str) or not name.strip():
                self.warn(f"{kind} backend {brief(name)} is not a Service name; skipped",
                          holder.line_of(key))
                continue
            target_ns = holder.get("namespace") if kind != "Ingress" else ns
            target_ns = target_ns if isinstance(target_ns, str) and _DNS_LABEL.match(target_ns) else ns
            self._edge(me, object_id(target_ns, "Service", name.strip()), "Service", name.strip(),
                       holder.line_of(key), source.evidence(holder, key), (), "Resource",
                       "routesTo")


def _items(value: object) -> list:
    return list(value) if isinstance(value, YList) else []


def _label(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _pod_spec(obj: YMap, kind: str) -> YMap | None:
    path = {"Pod": ("spec",), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec")
            }.get(kind, ("spec", "template", "spec"))
    node: object = obj
    for key in path:
        node = node.get(key) if isinstance(node, YMap) else None
    return node if isinstance(node, YMap) else None


def _pod_labels(obj: YMap, kind: str) -> dict[str, str]:
    path = {"Pod": ("metadata", "labels"),
            "CronJob": ("spec", "jobTemplate", "spec", "template", "metadata", "labels")
            }.get(kind, ("spec", "template", "metadata", "labels"))
    node: object = obj
    for key in path:
        node = node.get(key) if isinstance(node, YMap) else None
    return {str(k): _label(v) for k, v in node.items()} if isinstance(node, YMap) else {}


def _containers(pod: YMap, with_init: bool = False):
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _items(pod.get(key)):
            if isinstance(c, YMap):
                yield (c, key == "initContainers") if with_init else c


register(KubernetesExtractor())
