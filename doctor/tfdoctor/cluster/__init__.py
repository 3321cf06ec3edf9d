"""`tfdoctor cluster`: TensorFlow's MultiWorkerMirroredStrategy across workers (docs/cluster.md)."""
