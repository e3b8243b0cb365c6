"""Rewrites of FX graphs before hipinductor partitions them, each counted in the graph's report: on the ATen graphs
AOTAutograd hands over (channels_last, empty_cat_inputs, gemm_epilogue) and on dynamo's graph before AOTAutograd
traces it (uint8_interpolation). Each module is one pass; they depend only on hipinductor.nodes."""
