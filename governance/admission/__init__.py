"""The admission webhook: AdmissionReview → OPA decision → AdmissionReview."""
