"""The real local stack (Kafka, MirrorMaker 2, OPA, etcd + kube-apiserver) on 127.0.0.1."""

from governance.devstack.process import DevstackError
from governance.devstack.stack import Stack, StackSpec

__all__ = ["DevstackError", "Stack", "StackSpec"]
