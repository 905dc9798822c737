"""The real local stack (Kafka, MirrorMaker 2, OPA, etcd + kube-apiserver) on 127.0.0.1.

Import `governance.devstack.stack.Stack` for the whole stack; this package
itself stays import-light because `mm2gov validate` uses its tool lookups.
"""
