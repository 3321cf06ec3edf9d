"""Pictures of the machine from data already collected: the GPU table with throughput bars,
the topology matrix, the cluster's busbw and step times (model.py), built from Facts
(gpus.py) and cluster documents (cluster.py, topology.py), drawn as text (text.py); the
Markdown, HTML and TUI renderers draw the same tables."""

from tfdoctor.pictures.cluster import cluster_pictures
from tfdoctor.pictures.gpus import gpu_table
from tfdoctor.pictures.model import Bar, ClusterPictures, GpuRow, GpuTable, TopologyMatrix
from tfdoctor.pictures.topology import topology_matrix

__all__ = ["Bar", "ClusterPictures", "GpuRow", "GpuTable", "TopologyMatrix", "cluster_pictures",
           "gpu_table", "topology_matrix"]
