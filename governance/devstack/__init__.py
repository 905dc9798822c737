"""The real local stack (Kafka, MirrorMaker 2, OPA, etcd + kube-apiserver) on 127.0.0.1.

Import `governance.devstack.stack.Stack` for the whole stack. Used by tests, bench,
`mm2gov devstack` and `mm2gov demo` only: production code never imports it (the tools
mm2gov runs are found by `governance.tools`; `.importlinter` enforces this).
"""
