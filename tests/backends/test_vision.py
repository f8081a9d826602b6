"""Image inputs for the backends: the OpenAI vision wire format, JPEG round trips through the stub
server and the scripted backend, the reply cache over image bytes, and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.backends import BackendError, Message, OpenAIBackend, ReplyCache, ScriptedBackend, StubOpenAIServer
from neurips26.backends.vision import (
    ImageMessage,
    TransformersVisionBackend,
    decode_jpeg,
    encode_jpeg,
    image_message,
    images_in_request,
)


def _frame(red: int = 200) -> np.ndarray:
    f = np.zeros((120, 160, 3), np.uint8)
    f[..., 0] = red
    return f


def test_image_message_wire_format_and_jpeg_round_trip():
    m = image_message("look", [_frame(), _frame(50)])
    d = m.to_dict()
    assert d["role"] == "user" and d["content"][0] == {"type": "text", "text": "look"}
    assert [p["type"] for p in d["content"][1:]] == ["image_url", "image_url"]
    assert d["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    back = images_in_request({"messages": [d]})
    # JPEG is lossy: a flat colour comes back within a few grey levels
    assert back[0].shape == (120, 160, 3) and abs(back[0][..., 0].mean() - 200) < 4
    assert abs(back[1][..., 0].mean() - 50) < 4
    assert max(decode_jpeg(encode_jpeg(np.zeros((900, 600, 3), np.uint8), max_side=448)).shape[:2]) == 448


def test_openai_backend_sends_images_to_a_compatible_server_and_caches_them(tmp_path):
    def reply(body):
        ims = images_in_request(body)
        return f"{len(ims)} images, red {ims[0][..., 0].mean():.0f}"

    with StubOpenAIServer(reply=reply) as server:
        b = OpenAIBackend("vlm", base_url=server.url, cache=ReplyCache(tmp_path))
        r1 = b.chat([Message("system", "be brief"), image_message("what?", [_frame(), _frame()])])
        r2 = b.chat([Message("system", "be brief"), image_message("what?", [_frame(), _frame()])])
        r3 = b.chat([Message("system", "be brief"), image_message("what?", [_frame(10), _frame()])])
        assert r1.text == "2 images, red 200" and not r1.cached
        assert r2.cached and r2.text == r1.text
        assert not r3.cached and r3.text == "2 images, red 10"  # other pixels, other cache key
        assert len(server.requests) == 2


def test_scripted_backend_policy_reads_pixels():
    sb = ScriptedBackend(lambda ms: str(int(decode_jpeg(ms[-1].images[0])[..., 0].mean() > 100)))
    assert sb.chat([image_message("x", [_frame(200)])]).text == "1"
    assert sb.chat([image_message("x", [_frame(20)])]).text == "0"


def test_bad_image_inputs():
    with pytest.raises(ValueError, match="uint8"):
        encode_jpeg(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="JPEG bytes"):
        ImageMessage("user", "x", images=("not bytes",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="readable image"):
        decode_jpeg(b"garbage")
    with pytest.raises(ValueError, match="base64 data URL"):
        images_in_request({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "http://example.com/a.jpg"}}]}]})


def test_transformers_vision_backend_needs_a_saved_folder(tmp_path):
    with pytest.raises(ValueError, match="config.json"):
        TransformersVisionBackend(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    with pytest.raises(BackendError, match="image-text-to-text"):
        TransformersVisionBackend(tmp_path)


@pytest.fixture(scope="module")
def tiny_llava_dir(tmp_path_factory):
    """A tiny randomly initialised LLaVA (CLIP vision tower + Llama text model) and its processor,
    saved to a tmp folder; the word-level tokenizer is built in memory (no download)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    words = '[UNK] [EOS] <image> user assistant : yes no relevant confidence answer red green blue { } " , 0.5 null'
    vocab = {w: i for i, w in enumerate(words.split())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]",
                                   extra_special_tokens={"image_token": "<image>"})
    template = ("{% for m in messages %}{{ m['role'] }} :{% for c in m['content'] %}{% if c['type'] == 'image' %}"
                " <image>{% else %} {{ c['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
                "{% if add_generation_prompt %}assistant :{% endif %}")
    proc = LlavaProcessor(image_processor=CLIPImageProcessor(size={"shortest_edge": 28},
                                                             crop_size={"height": 28, "width": 28}),
                          tokenizer=fast, patch_size=14, chat_template=template,
                          vision_feature_select_strategy="default", num_additional_image_tokens=1)
    cfg = LlavaConfig(vision_config=CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                                     num_attention_heads=2, image_size=28, patch_size=14),
                      text_config=LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32,
                                              num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                              max_position_embeddings=256),
                      image_token_index=vocab["<image>"], vision_feature_select_strategy="default")
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny_llava")
    LlavaForConditionalGeneration(cfg).save_pretrained(path)
    proc.save_pretrained(path)
    return path


def test_transformers_vision_backend_sees_images_deterministically(tiny_llava_dir, tmp_path):
    from neurips26.backends import ChatParams

    b = TransformersVisionBackend(tiny_llava_dir, cache=ReplyCache(tmp_path))
    msgs = [image_message("is it red ?", [_frame(200), _frame(10)])]
    r1 = b.chat(msgs, ChatParams(max_tokens=4))
    r2 = TransformersVisionBackend(tiny_llava_dir).chat(msgs, ChatParams(max_tokens=4))
    assert r1.text == r2.text and r1.completion_tokens == 4 and not r1.cached
    # 2 images × (4 patches + 1) image tokens + the text: the images reached the model
    assert r1.prompt_tokens > 10
    assert b.chat(msgs, ChatParams(max_tokens=4)).cached
    text_only = b.chat([Message("user", "is it red ?")], ChatParams(max_tokens=4))
    assert text_only.prompt_tokens < r1.prompt_tokens
