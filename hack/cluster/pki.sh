#!/usr/bin/env bash
# Throw-away PKI for the loopback test cluster.   pki.sh DIR NODE_NAME
set -euo pipefail
dir=$1 node=$2
mkdir -p "$dir" && cd "$dir"
key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null; }
key ca
openssl req -x509 -new -key ca.key -subj "/CN=duroxide-test-ca" -days 30 -out ca.crt \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
# sign NAME SUBJECT EKU [SAN]
sign() {
  local n=$1 subj=$2 eku=$3 san=${4:-}
  key "$n"
  openssl req -new -key "$n.key" -subj "$subj" -out "$n.csr"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    if [ -n "$san" ]; then echo "subjectAltName=$san"; fi
  } >"$n.ext"
  openssl x509 -req -in "$n.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile "$n.ext" -out "$n.crt" 2>/dev/null
  rm -f "$n.csr" "$n.ext"
}
sign apiserver "/CN=kube-apiserver" serverAuth \
  "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1"
sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
sign admin "/O=system:masters/CN=admin" clientAuth
sign controller-manager "/CN=system:kube-controller-manager" clientAuth
sign scheduler "/CN=system:kube-scheduler" clientAuth
sign kubelet "/O=system:nodes/CN=system:node:$node" clientAuth
key sa
openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
