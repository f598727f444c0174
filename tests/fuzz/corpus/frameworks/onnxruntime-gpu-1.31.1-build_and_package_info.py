package_name = 'onnxruntime-gpu'
__version__ = '1.31.1'
cuda_version = '13.0'
