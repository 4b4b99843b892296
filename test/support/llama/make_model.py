"""Writes a tiny random-weight llama model as GGUF for the real-LLM tests.

Usage: python make_model.py OUT.gguf [SEED]

A `llama` architecture (n_embd 64, 2 layers, 4 heads, n_ff 128, context 2048) with weights
drawn from a fixed-seed generator, a byte-fallback SentencePiece vocabulary (<unk>, <s>, </s>
and the 256 <0xNN> byte tokens, so every character is one or more tokens) and a chat template.
Its text is noise: only grammar-constrained output (a JSON Schema in the request) makes it
answer valid JSON, which is what the advisor's tests need. Same seed, same bytes.
"""

import sys

import numpy as np
from gguf import GGUFWriter, TokenType

N_EMBD = 64
N_LAYER = 2
N_HEAD = 4
N_FF = 128
N_CTX = 2048
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def main() -> None:
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 26
    rng = np.random.default_rng(seed)

    tokens = [b"<unk>", b"<s>", b"</s>"] + [f"<0x{i:02X}>".encode() for i in range(256)]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256
    n_vocab = len(tokens)

    w = GGUFWriter(out, "llama")
    w.add_name("aiops-test-random")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)  # all F32
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * n_vocab)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_chat_template(CHAT_TEMPLATE)

    def weights(*shape: int) -> np.ndarray:
        return rng.normal(0.0, 0.02, size=shape).astype(np.float32)

    w.add_tensor("token_embd.weight", weights(n_vocab, N_EMBD))
    for i in range(N_LAYER):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(f"blk.{i}.{name}.weight", weights(N_EMBD, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(N_EMBD, dtype=np.float32))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", weights(N_FF, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_up.weight", weights(N_FF, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_down.weight", weights(N_EMBD, N_FF))
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", weights(n_vocab, N_EMBD))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
