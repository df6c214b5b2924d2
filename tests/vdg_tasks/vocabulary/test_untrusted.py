"""Names and paths from outside confined to their folder; secret-looking settings redacted."""

from __future__ import annotations

import json
import os

import pytest

from vdg_tasks.vocabulary.untrusted import (
    REDACTED,
    UntrustedPath,
    confined,
    is_secret_name,
    path_component,
    redact,
    redact_value,
)

# --- confined -----------------------------------------------------------------------------------------


def test_a_relative_path_inside_the_root_resolves_under_it(tmp_path):
    assert confined(tmp_path, "a/b.mp4") == (tmp_path / "a" / "b.mp4").resolve()
    assert confined(tmp_path, "a/./b") == (tmp_path / "a" / "b").resolve()


@pytest.mark.parametrize(
    ("relative", "reason"),
    [
        ("", "it is empty"),
        ("a\x00b", "NUL"),
        ("/etc/passwd", "it is absolute"),
        ("\\\\server\\share", "it is absolute"),
        ("~/x", "it is absolute"),
        ("C:\\x", "it is absolute"),
        ("C:x", "it is absolute"),
        ("../x", "climbs out"),
        ("a/../../b", "climbs out"),
        ("a\\..\\..\\b", "climbs out"),
        ("a/..", "climbs out"),
        (".", "the folder itself"),
    ],
)
def test_confined_refuses_what_leaves_or_is_no_path(tmp_path, relative, reason):
    with pytest.raises(UntrustedPath, match=reason) as caught:
        confined(tmp_path, relative, "video path")
    assert str(caught.value).startswith("video path ")
    assert caught.value.value == relative and caught.value.root == tmp_path and reason in caught.value.reason
    assert isinstance(caught.value, ValueError)


def test_confined_refuses_a_symlink_out_of_the_root(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "file_link").symlink_to(outside / "secret.txt")
    for relative in ("link/secret.txt", "file_link", "link"):
        with pytest.raises(UntrustedPath, match=r"resolves outside the folder \(a symlink out\)"):
            confined(root, relative)
    (root / "inner").mkdir()
    (root / "inside_link").symlink_to(root / "inner", target_is_directory=True)
    assert confined(root, "inside_link/x") == (root / "inner" / "x").resolve()


def test_a_root_that_is_itself_a_symlink_confines_to_its_target(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert confined(tmp_path / "alias", "x.mp4") == (tmp_path / "real" / "x.mp4").resolve()


# --- path_component --------- -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["videomme_vdg_orig", "mvbench_action-antonym", "a.b", "x=1,y@2", "A+B", "9"])
def test_a_plain_name_is_one_file_name(name):
    assert path_component(name) == name


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "it is empty"),
        ("a\x00", "NUL"),
        ("/abs/x", "it is absolute"),
        ("\\abs", "it is absolute"),
        ("C:x", "it is absolute"),
        ("..", "climbs out"),
        ("../../x", "climbs out"),
        ("a/../../b", "climbs out"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        (".hidden", "starts with a dot"),
        (".", "starts with a dot"),
        ("a b", "only letters, digits"),
        ("a*", "only letters, digits"),
        ("x" * 201, r"at most 200"),
    ],
)
def test_path_component_refuses_what_is_not_one_plain_name(name, reason):
    with pytest.raises(UntrustedPath, match=reason) as caught:
        path_component(name, "task name")
    assert str(caught.value).startswith(f"task name {name!r} refused")
    assert caught.value.root is None


# --- redact ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # lmms-eval model_args strings
        ("pretrained=Qwen/x,api_key=sk-1,max_num_frames=32", "pretrained=Qwen/x,api_key=<redacted>,max_num_frames=32"),
        ("apikey=abc,access_key=zz,auth=foo", "apikey=<redacted>,access_key=<redacted>,auth=<redacted>"),
        ("hf_token=hf_abc,HF_TOKEN=x", "hf_token=<redacted>,HF_TOKEN=<redacted>"),
        ("db_password=p;client_secret=s", "db_password=<redacted>;client_secret=<redacted>"),
        ("base_url=https://user:pw@host/v1", "base_url=https://<redacted>@host/v1"),
        ('{"api_key": "sk-1", "token": "t"}', '{"api_key": "<redacted>", "token": "<redacted>"}'),
        ("--api_key=sk --api-key=sk2", "--api_key=<redacted> --api-key=<redacted>"),
        # names that only look like secrets, and values that stay
        ("visual_key=aaa,author=bob,max_num_frames=32", "visual_key=aaa,author=bob,max_num_frames=32"),
        ("token_strategy=single,max_new_tokens=16,tokenizer=x", "token_strategy=single,max_new_tokens=16,tokenizer=x"),
        ("num_key_frames=32", "num_key_frames=32"),
        ("", ""),
    ],
)
def test_redact_hides_secret_settings_and_keeps_the_rest(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected  # idempotent


def test_redact_hides_json_and_repr_values_whole_and_keeps_them_parseable():
    doc = {"api_key": "sk 1 with spaces", "visual_key": "v", "nested": {"hf_token": "hf_x", "n": 3}}
    text = redact(json.dumps(doc))
    assert "sk 1" not in text and "hf_x" not in text
    assert json.loads(text) == {"api_key": REDACTED, "visual_key": "v", "nested": {"hf_token": REDACTED, "n": 3}}
    settings = json.dumps({"model_args": "pretrained=x,api_key=SECRET0,max_num_frames=8", "gen_kwargs": "auth=SECRET"})
    assert json.loads(redact(settings)) == {
        "model_args": f"pretrained=x,api_key={REDACTED},max_num_frames=8",
        "gen_kwargs": f"auth={REDACTED}",
    }
    assert "SECRET" not in redact(repr({"auth": "SECRET x", "author": "Ann"}))
    assert "'author': 'Ann'" in redact(repr({"auth": "SECRET x", "author": "Ann"}))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: {REDACTED}"),
        ("Authorization: Token abc123; next", f"Authorization: {REDACTED}; next"),
        ("Proxy-Authorization: Digest c2VjcmV0", f"Proxy-Authorization: {REDACTED}"),
        ('{"headers": {"Authorization": "Basic dXNlcjpwYXNz"}}', f'{{"headers": {{"Authorization": "{REDACTED}"}}}}'),
        ("headers=Authorization: Basic abc,max_num_frames=8", f"headers=Authorization: {REDACTED},max_num_frames=8"),
        # a secret-named --flag or environment variable followed by its value after a space
        ("--api-key sk-abc123 --model gpt", f"--api-key {REDACTED} --model gpt"),
        ("-token abc", f"-token {REDACTED}"),
        ("HF_TOKEN hf_x", f"HF_TOKEN {REDACTED}"),
        ("the token was refused", "the token was refused"),  # prose: no flag, no variable
        ("--num-frames 8 --tokenizer x", "--num-frames 8 --tokenizer x"),
        # one-word names
        ("secretkey=a,accesskey=b,accesstoken=c", f"secretkey={REDACTED},accesskey={REDACTED},accesstoken={REDACTED}"),
        ("apitoken=a mypassword=b DBPASSWORD=c", f"apitoken={REDACTED} mypassword={REDACTED} DBPASSWORD={REDACTED}"),
        # URL-encoded separator, query strings
        ("next=%2Flogin%3Fpassword%3Dhunter2%26x%3D1", f"next=%2Flogin%3Fpassword%3D{REDACTED}%26x%3D1"),
        ("https://host/x?token=abc&x=1", f"https://host/x?token={REDACTED}&x=1"),
        ("https://h/x?sig=abc&se=2030", f"https://h/x?sig={REDACTED}&se=2030"),
        (
            "https://b.s3/x?X-Amz-Credential=AKIA/2020&X-Amz-Signature=deadbeef&X-Amz-Expires=60",
            f"https://b.s3/x?X-Amz-Credential={REDACTED}&X-Amz-Signature={REDACTED}&X-Amz-Expires=60",
        ),
        # settings that are no secret stay whole (the value tells runs apart)
        ("token_strategy=single,max_token=8,use_auth=true", "token_strategy=single,max_token=8,use_auth=true"),
        ("pwd_dir=/w,cookie_policy=x,signature_version=v4", "pwd_dir=/w,cookie_policy=x,signature_version=v4"),
    ],
)
def test_redact_hides_headers_flags_one_word_names_and_query_strings(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected


SHAPES = [
    "sk-" + "a1B2" * 6,
    "sk-proj-" + "Ab_9" * 6,
    "ghp_" + "0123456789abcdef" * 2 + "0123",
    "github_pat_" + "11ABCDEFG0" * 3,
    "hf_" + "AbCdEfGhIj" * 3 + "kl",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-1234567890-abcdefghij",
]


@pytest.mark.parametrize("secret", SHAPES)
def test_a_value_of_a_known_secret_shape_is_hidden_under_any_name(secret):
    for text in (f"base={secret}", f"model=gpt,note={secret},n=1", f"failed with {secret}.", secret):
        out = redact(text)
        assert secret not in out and REDACTED in out
        assert redact(out) == out
    assert redact(f"model=gpt,note={secret},n=1") == f"model=gpt,note={REDACTED},n=1"


def test_a_private_key_block_is_hidden_whole():
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key file: {pem} read") == f"key file: {REDACTED} read"
    assert redact(f"private_key: {pem}") == f"private_key: {REDACTED}"
    assert "MIIE" not in redact("-----BEGIN PRIVATE KEY-----\nMIIEow (cut off)")


@pytest.mark.parametrize(
    "text", ["sk-short", "hf_hub_download", "task-" + "a" * 30, "AKIAshort", "ghp_x", "x-hf_" + "a" * 40]
)
def test_what_only_resembles_a_secret_shape_is_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a=" * 600, "a=" * 600),
        ("a:" * 600, "a:" * 600),
        ("https://" + "a:" * 600, "https://" + "a:" * 600),
        ("x=y " * 3000, "x=y " * 3000),
        ("k=" * 600 + "api_key=s", "k=" * 600 + f"api_key={REDACTED}"),
    ],
)
def test_nested_settings_of_any_depth_are_redacted_without_recursion(text, expected):
    assert redact(text) == expected


def test_redact_is_linear_on_large_hostile_text():
    # A quadratic scan takes minutes on these (redact("a-" * 10000) took 4.6 s before); each is 200000 characters.
    n = 100_000
    for text in ("a-" * n, "a=" * n, "a." * n, "a" * 2 * n, "https://" + "a:" * n, "x=" + " " * 2 * n):
        assert redact(text) == text
    assert redact("api_key='" + "\\'" * n) == f"api_key='{REDACTED}"  # unterminated quote: hidden to the end
    assert redact("-----BEGIN PRIVATE KEY-----" * n).count("BEGIN") == 0
    hidden = redact("api_key=s," * n)
    assert hidden == f"api_key={REDACTED}," * n


def test_redact_leaves_what_is_not_text_alone():
    assert redact("") == "" and redact(None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name",
    [
        *("api_key", "apikey", "access_key", "auth", "hf_token", "HF_TOKEN", "x-auth", "apiKey", "key", "cookie"),
        *("token", "access_token", "auth_token", "basic_auth", "authorization", "Proxy-Authorization"),
        # one-word names: (api|access|secret|private|auth|client)(key|token) and password anywhere in a name
        *("secretkey", "accesskey", "accesstoken", "apitoken", "mypassword", "DBPASSWORD", "dbPassword"),
        *("X-Amz-Signature", "X-Amz-Credential", "sig", "client_secret", "aws_secret_access_key", "--api-key"),
    ],
)
def test_secret_names(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        *("visual_key", "author", "max_num_frames", "num_key_frames", "max_new_tokens", "tokenizer", "keyframes"),
        "monkey",
        # real model settings that only start with (or count) a secret word: token_strategy is llava_onevision's
        *("token_strategy", "token_ids", "max_token", "num_token", "token_budget", "token_count", "use_auth"),
        *("auth_mode", "pwd_dir", "cookie_policy", "signature_version", "pad_token", "eos_token", "sigma"),
    ],
)
def test_names_that_are_no_secret(name):
    assert not is_secret_name(name)


def test_redact_value_walks_mappings_lists_and_tuples():
    value = {
        "model_args": "pretrained=x,api_key=SECRET1",
        "api_key": "SECRET2",
        "access_key": {"id": "SECRET3"},
        "hf_token": None,
        "runs": ["label=runs/a", ("base_url=https://u:SECRET4@h",)],
        "pretrained=y,auth=SECRET5": 1,
        "visual_key": "v",
        "n": 3,
    }
    out = redact_value(value)
    assert "SECRET" not in json.dumps(out)
    assert out["visual_key"] == "v" and out["n"] == 3 and out["hf_token"] is None
    assert isinstance(out["runs"][1], tuple)
    assert value["api_key"] == "SECRET2"  # a copy: the input is untouched


def test_untrusted_path_is_raised_with_its_attributes(tmp_path):
    exc = UntrustedPath("x", tmp_path, "why", "thing")
    assert str(exc) == f"thing 'x' refused: why (must stay inside {tmp_path})"
    assert os.fspath(exc.root) == os.fspath(tmp_path)


def test_within_lets_a_link_resolve_in_a_folder_holding_the_root_and_nowhere_else(tmp_path):
    """A hub snapshot's file links into its repository's blobs/: allowed with ``within`` the repository, refused
    without it; a link leaving ``within`` is refused either way, and ``within`` must hold the root."""
    repo = tmp_path / "repo"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "b1").write_bytes(b"x")
    snapshot = repo / "snapshots" / "rev"
    snapshot.mkdir(parents=True)
    os.symlink("../../blobs/b1", snapshot / "v.mp4")
    (tmp_path / "outside").write_bytes(b"y")
    os.symlink(tmp_path / "outside", snapshot / "out.mp4")
    with pytest.raises(UntrustedPath, match="symlink out"):
        confined(snapshot, "v.mp4")
    assert confined(snapshot, "v.mp4", within=repo) == (repo / "blobs" / "b1").resolve()
    with pytest.raises(UntrustedPath, match="symlink out"):
        confined(snapshot, "out.mp4", within=repo)
    with pytest.raises(UntrustedPath, match="climbs out"):
        confined(snapshot, "../../blobs/b1", within=repo)  # as spelled, still judged against the root
    with pytest.raises(ValueError, match="does not hold"):
        confined(snapshot, "v.mp4", within=tmp_path / "elsewhere")
