"""tfdoctor: an environment doctor for TensorFlow on NVIDIA GPUs."""

__version__ = "0.1.0"
