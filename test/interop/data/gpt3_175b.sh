#!/bin/bash
# GPT-3 175B in the layout of Megatron-LM's examples/gpt3 (TP8 PP16, fp16), written for the
# importer's tests: bash arrays, torchrun launcher flags, comments and a batch ramp-up.
GPUS_PER_NODE=8
NUM_NODES=16

LAUNCH=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr localhost
)
MODEL=(
    --num-layers 96
    --hidden-size 12288
    --num-attention-heads 96
    --seq-length 2048
    --max-position-embeddings 2048
    --attention-backend auto  # flash, fused, unfused or local
)
TRAIN=(
    --micro-batch-size 1
    --global-batch-size 1536
    --rampup-batch-size 16 16 5859375
    --train-iters 500000
    --lr 6.0e-5
    --fp16
)
PARALLEL=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 16
)
torchrun ${LAUNCH[@]} pretrain_gpt.py ${MODEL[@]} ${TRAIN[@]} ${PARALLEL[@]} \
    --data-path $DATA_PATH --split 949,50,1 --log-interval 100
