# Llama 3 8B with FP8 in the style of Megatron-LM's examples/llama scripts: variables with
# defaults, quoted array elements and line continuations.
TP_SIZE=${TP:-2}
CP_SIZE=2
SEQ_LENGTH=8192
DTYPE="fp8"
MODEL_ARGS=(
    --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336
    --num-attention-heads 32 --group-query-attention --num-query-groups 8 --kv-channels 128
    --seq-length $SEQ_LENGTH --max-position-embeddings $SEQ_LENGTH
    --position-embedding-type rope --rotary-base 1000000 --swiglu
    --normalization RMSNorm --untie-embeddings-and-output-weights --disable-bias-linear
)
TRAINING_ARGS=(
    --micro-batch-size 1 --global-batch-size 128 --train-samples 1953125000 --bf16
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather
)
DTYPE_ARGS=(
    "--fp8-format hybrid"
    "--fp8-recipe delayed"
    "--fp8-param-gather"
)
python pretrain_gpt.py ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${DTYPE_ARGS[@]} \
    --tensor-model-parallel-size $TP_SIZE --context-parallel-size $CP_SIZE --sequence-parallel \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Meta-Llama-3-8B \
    --recompute-granularity selective --tp-comm-overlap --my-custom-flag 7
