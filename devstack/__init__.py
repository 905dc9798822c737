"""The real local stack (Kafka, MirrorMaker 2, OPA, etcd + kube-apiserver) on 127.0.0.1.

Import `devstack.stack.Stack` for the whole stack. It lives in the checkout, beside `governance`, and is
not in the wheel: tests, bench, `mm2gov devstack` and `mm2gov demo` (which load it from the checkout)
use it; production code never imports it (the tools mm2gov runs are found by `governance.tools`;
`.importlinter` enforces this).
"""
