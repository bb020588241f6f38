"""Ways a secret could still reach the model through the kernel tools, each
driven through ``notebook_variables`` and ``inspect_variable`` on a
namespace that holds it: a DataFrame's secret-named column taken out as a
Series, a row, an index or a transposed frame; a frame inside a dict; a
dict's items as pairs, its views, its subclasses; an object's repr or a
string with an unquoted ``password=...``; IPython's cell history (``In``,
``_i1``, ``Out``) read with ``inspect_variable``; a key set in the failing
cell as ``last_error`` shows it (``os.environ["API_KEY"] = "..."``, ``%env``,
``r"..."``, an annotation). And the other way: names and text that only
resemble secrets (``max_tokens``, ``monkey``, ``task-...``, ``join_key``, a
merge column named ``key``) are shown."""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import pandas as pd
import pytest

from magics.kernel_tools.errors import ErrorTracker
from magics.kernel_tools.mentions import mentioned
from magics.kernel_tools.namespace import MASKED, mask_keys
from magics.kernel_tools.tools import KernelTools
from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.redaction import Redactor, looks_secret, mask_credentials
from mewcode_kernel.core.tools import RunContext

KEY = "abc123zzKEY"
PASSWORD = "hunter2pw"
SECRETS = (KEY, PASSWORD)


def users() -> Any:
    return pd.DataFrame(
        {"user": ["ann", "bob"], "api_key": [KEY, KEY + "2"], "password": [PASSWORD] * 2}
    )


def model_sees(**variables: Any) -> str:
    """What the model receives from listing the variables and from
    inspecting each one."""
    shell = SimpleNamespace(user_ns=variables, user_ns_hidden={})
    tools = {t.name: t for t in KernelTools(shell=shell, errors=ErrorTracker()).tools()}
    ctx = RunContext(root=Path.cwd())

    async def run() -> list[str]:
        texts = [await tools["notebook_variables"].call(ctx, {})]
        for name in variables:
            texts.append(await tools["inspect_variable"].call(ctx, {"name": name}))
        return [str(t) for t in texts]

    return "\n".join(asyncio.run(run()))


def no_secret(text: str, *secrets: str) -> str:
    for secret in secrets or SECRETS:
        assert secret not in text, text
    return text


# --- 1. secret-named DataFrame columns, taken out of the frame ----------------------


def test_a_secret_named_column_as_a_series_is_masked() -> None:
    text = no_secret(model_sees(s=users()["api_key"], p=users()["password"]))
    assert "pandas.Series" in text and MASKED in text


def test_a_row_masks_the_values_under_secret_labels_and_keeps_the_others() -> None:
    text = no_secret(model_sees(row=users().iloc[0]))
    assert "ann" in text and "api_key" in text and "password" in text


def test_an_index_named_like_a_secret_is_masked() -> None:
    frame = users()
    text = no_secret(
        model_sees(
            idx=pd.Index([KEY, PASSWORD], name="api_key"),
            by_key=frame.set_index("api_key"),
            names=frame.set_index("password")["user"],
            multi=frame.set_index(["user", "password"]),
        )
    )
    assert "ann" in text and "bob" in text


def test_a_transposed_frame_masks_the_rows_named_like_secrets() -> None:
    frame = users()
    text = no_secret(model_sees(t=frame.T, tk=frame.set_index("api_key").T))
    assert "ann" in text and "user" in text


def test_a_frame_or_series_inside_a_container_shows_only_its_type_and_shape() -> None:
    frame = users()
    text = no_secret(
        model_sees(
            nested={"frame": frame, "n": 1},
            frames=[frame["password"], frame.set_index("api_key").index],
            pair=(frame, 2),
        )
    )
    assert "<DataFrame 2x3>" in text and "<Series 2>" in text and "<Index 2>" in text
    assert "'n': 1" in text


def test_a_frame_inside_a_dataclass_a_namedtuple_or_a_namespace_shows_only_its_shape() -> None:
    @dataclass
    class Holder:
        frame: Any
        label: str

    class Pair(NamedTuple):
        frame: Any
        label: str

    frame = users()
    text = no_secret(
        model_sees(
            holder=Holder(frame, "ok"), pair=Pair(frame, "ok"), ns=SimpleNamespace(frame=frame)
        )
    )
    assert "Holder(frame=<DataFrame 2x3>, label='ok')" in text
    assert "Pair(frame=<DataFrame 2x3>, label='ok')" in text


def test_a_dataclass_with_its_own_repr_keeps_it() -> None:
    @dataclass
    class Quiet:
        pin: str

        def __repr__(self) -> str:
            return "Quiet(…)"

    text = model_sees(q=Quiet("4321"))
    assert "Quiet(…)" in text and "4321" not in text


def test_values_of_a_frame_mask_credential_shapes() -> None:
    # an ndarray has no column names: only what looks like a key can be found
    key = "sk-ant-api03-" + "Q7" * 20
    frame = pd.DataFrame({"user": ["ann"], "api_key": [key]})
    no_secret(model_sees(v=frame.values), key)


# --- 2. dicts in other shapes, object reprs, unquoted values ------------------------


def test_pairs_and_dict_views_mask_the_values_under_secret_keys() -> None:
    d = {"password": PASSWORD, "api_key": KEY, "host": "db"}
    text = no_secret(
        model_sees(
            pairs=list(d.items()),
            one=("password", PASSWORD),
            items=d.items(),
            values=d.values(),
            ovalues=collections.OrderedDict(d).values(),
        )
    )
    assert "('host', 'db')" in text and "'db'" in text
    assert "dict_items" in text and "dict_values" in text


@pytest.mark.parametrize(
    "make",
    [collections.OrderedDict, lambda d: collections.defaultdict(str, d), collections.Counter],
    ids=["OrderedDict", "defaultdict", "Counter"],
)
def test_dict_subclasses_are_masked_like_dicts(make: Any) -> None:
    text = no_secret(model_sees(d=make({"password": PASSWORD, "host": "db"})))
    assert "'host': 'db'" in text


def test_an_object_repr_with_an_unquoted_secret_field_is_masked() -> None:
    class Angle:
        def __repr__(self) -> str:
            return f"<Client token={KEY} host=db>"

    class Call:
        def __repr__(self) -> str:
            return f"Client(token={KEY}, password='{PASSWORD}')"

    text = no_secret(model_sees(a=Angle(), c=Call(), inside=[Angle()]))
    assert "host=db" in text


@pytest.mark.parametrize(
    "line",
    [
        f"PASSWORD={PASSWORD}",
        f"password: {PASSWORD}",
        f"api_key={KEY}",
        f"db_password = {PASSWORD}, user=ann",
        f"(token:{KEY})",
        f"[secret={KEY}]",
        f"{{auth_token: {KEY}}}",
        f"Authorization: Basic {KEY}",
    ],
)
def test_an_unquoted_value_after_a_secret_name_is_masked(line: str) -> None:
    no_secret(mask_keys(f"log: {line} end"))
    no_secret(model_sees(line=line, lines=[line]))


def test_unquoted_values_keep_what_is_not_secret() -> None:
    assert mask_keys("password=hunter2pw, user=ann") == "password=[masked], user=ann"
    assert mask_keys("<Client token=abc123zz>") == "<Client token=[masked]>"
    assert mask_keys("token=None flag=True") == "token=None flag=True"
    # a traceback names a missing key after "KeyError:": that key is no secret
    assert mask_keys("KeyError: 'region'") == "KeyError: 'region'"
    assert mask_keys("max_tokens=1024, keyword: pandas") == "max_tokens=1024, keyword: pandas"


def test_an_unquoted_secret_in_an_exception_message_is_masked_and_the_cell_stays_code() -> None:
    cell = "token = get_token()\nconnect(token)"
    try:
        raise PermissionError(f"login refused: password={PASSWORD} token: {KEY}")
    except PermissionError as exc:
        error = exc
    errors = ErrorTracker()
    result = SimpleNamespace(
        info=SimpleNamespace(raw_cell=cell), error_in_exec=error, execution_count=3
    )
    errors.post_run_cell(result)
    shell = SimpleNamespace(user_ns={}, user_ns_hidden={})
    tools = {t.name: t for t in KernelTools(shell=shell, errors=errors).tools()}
    report = str(asyncio.run(tools["last_error"].call(RunContext(root=Path.cwd()), {})))
    no_secret(report)
    assert cell in report  # the model reads the cell to fix it: code is not mangled
    no_secret(errors.context_line() or "")


def test_a_secret_named_frame_column_keeps_its_dtype_in_the_listing() -> None:
    text = model_sees(frame=users())
    assert "api_key: str" in text or "api_key: object" in text


def test_a_function_signature_keeps_its_annotations_and_masks_a_secret_default() -> None:
    def connect(api_key: str, password: str = PASSWORD, retries: int = 3) -> None: ...

    text = no_secret(model_sees(connect=connect))
    # quoted here: this module's annotations are strings (from __future__)
    assert "connect(api_key: 'str', password: 'str' = [masked], retries: 'int' = 3)" in text


# --- 3. over-masking ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["task-1234567890abcdefghij", "disk-1234567890abcdefghij", "risk-assessment-2024-q1-final"],
)
def test_sk_inside_a_word_is_not_a_key(text: str) -> None:
    assert mask_credentials(text, MASKED) == text
    assert mask_keys(f"id {text}, ({text})") == f"id {text}, ({text})"


def test_an_sk_key_after_punctuation_is_still_masked() -> None:
    key = "sk-ant-api03-" + "Q7" * 20
    for text in (key, f"'{key}'", f"={key}", f"({key})", f"x {key}", f"_{key}"):
        assert key not in mask_credentials(text, MASKED), text


SECRET_NAMES = [
    "api_key",
    "apiKey",
    "APIKey",
    "API_KEY",
    "OPENAI_API_KEY",
    "openaiApiKey",
    "secret_key",
    "access_token",
    "accessToken",
    "db_password",
    "PGPASSWORD",
    "GITHUB_TOKEN",
    "private_key",
    "aws_secret_access_key",
    "auth_token",
    "client_secret",
    "password",
    "passwd",
    "token",
    "key",
    "secret",
    "credentials",
    "google_credentials",
    "MYSQL_PWD",
    "api_keys",
    "refresh_tokens",
    "x-api-key",
    "auth",
    "Authorization",
    "hf_token",
    "apikey",
    "secret_key_base",
    "api_key2",
    "db_pass",
    "DB_PASS",
    "dbPass",
    "pw",
    "db_pw",
    "cookie",
    "cookies",
    "session_cookie",
    "sessionid",
    "JSESSIONID",
    "PHPSESSID",
]
SHOWN_NAMES = [
    "max_tokens",
    "n_tokens",
    "num_tokens",
    "maxTokens",
    "tokens",
    "tokenizer",
    "keys",
    "join_keys",
    "keyword",
    "keywords",
    "monkey",
    "hockey_scores",
    "keyboard",
    "primary_key_column",
    "token_count",
    "SSH_KEY_PATH",
    "AWS_ACCESS_KEY_ID",
    "PATH",
    "PWD",
    "author",
    "oauth_client_id",
    "KeyError",
    "TOKENIZERS_PARALLELISM",
    "passenger",
    "bypass",
    "pass_rate",
    "first_pass",
    "pw_dist",
    "session_id",
    "sessionId",
    "cookie_consent",
    "join_key",
    "sort_key",
    "group_key",
    "partition_key",
    "row_key",
    "primary_key",
    "foreign_key",
    "cache_key",
    "dict_key",
    "merge_key",
    "index_key",
    "joinKey",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_are_secret(name: str) -> None:
    assert looks_secret(name)
    text = no_secret(model_sees(**{name.replace("-", "_"): PASSWORD}), PASSWORD)
    assert MASKED in text


@pytest.mark.parametrize("name", SHOWN_NAMES)
def test_names_that_only_resemble_secrets_are_shown(name: str) -> None:
    assert not looks_secret(name)
    assert "plain-value-shown" in model_sees(**{name: "plain-value-shown"})


def test_a_frame_column_named_like_a_count_of_tokens_is_shown() -> None:
    frame = pd.DataFrame({"max_tokens": [1024], "keyword": ["pandas"], "api_key": [KEY]})
    text = no_secret(model_sees(frame=frame, s=frame["keyword"]))
    assert "1024" in text and "pandas" in text


def test_the_environment_redactor_follows_the_same_names() -> None:
    env = {
        "PGPASSWORD": "pg-secret-value",
        "HF_TOKEN": "hf-secret-value",
        "TOKENIZERS_PARALLELISM": "false-but-long",
        "PWD": "/home/ann/project",
    }
    redacted = Redactor.from_environment(env).redact(" ".join(env.values()))
    assert "pg-secret-value" not in redacted and "hf-secret-value" not in redacted
    assert "false-but-long" in redacted and "/home/ann/project" in redacted


# --- 4. IPython's names: the cell history holds what the user typed ------------------

ENV_CELL = f'import os\nos.environ["PINECONE_API_KEY"] = "{PASSWORD}"'


def ipython_shell() -> SimpleNamespace:
    """A shell as IPython leaves it after two cells, the first setting a key."""
    history = ["", ENV_CELL, "df.head()"]
    out = {2: PASSWORD}
    hidden = {"In": history, "_ih": history, "Out": out, "_oh": out, "exit": object()}
    user_ns = {
        **hidden,
        "_i1": ENV_CELL,
        "_ii": ENV_CELL,
        "_": PASSWORD,
        "__": PASSWORD,
        "_2": PASSWORD,
        "rows": 3,
    }
    return SimpleNamespace(user_ns=user_ns, user_ns_hidden=hidden)


@pytest.mark.parametrize(
    "name", ["In", "_ih", "_i1", "_ii", "Out", "_oh", "_", "__", "_2", "In.copy", "exit"]
)
def test_inspect_variable_refuses_ipython_names_and_the_cell_history(name: str) -> None:
    shell = ipython_shell()
    tools = {t.name: t for t in KernelTools(shell=shell, errors=ErrorTracker()).tools()}
    ctx = RunContext(root=Path.cwd())
    with pytest.raises(ToolError, match="not a notebook variable") as caught:
        asyncio.run(tools["inspect_variable"].call(ctx, {"name": name}))
    no_secret(str(caught.value))
    # the names notebook_variables leaves out, and that an @mention does not attach
    listing = no_secret(str(asyncio.run(tools["notebook_variables"].call(ctx, {}))))
    assert "rows: int" in listing
    assert mentioned(shell, f"why @{name}?") == []


def test_a_name_the_user_rebinds_over_ipythons_is_the_users() -> None:
    shell = ipython_shell()
    shell.user_ns["In"] = "my own value"  # no longer IPython's object
    tools = {t.name: t for t in KernelTools(shell=shell, errors=ErrorTracker()).tools()}
    ctx = RunContext(root=Path.cwd())
    assert "my own value" in str(asyncio.run(tools["inspect_variable"].call(ctx, {"name": "In"})))


# --- 5. a key set in the failing cell, as last_error shows it -----------------------


def last_error_report(cell: str) -> str:
    errors = ErrorTracker()
    errors.post_run_cell(
        SimpleNamespace(
            info=SimpleNamespace(raw_cell=cell + "\nindex = pc.Index('x')"),
            error_in_exec=NameError("name 'pc' is not defined"),
            execution_count=2,
        )
    )
    shell = SimpleNamespace(user_ns={}, user_ns_hidden={})
    tools = {t.name: t for t in KernelTools(shell=shell, errors=errors).tools()}
    return str(asyncio.run(tools["last_error"].call(RunContext(root=Path.cwd()), {})))


TRIPLE = "'" * 3


@pytest.mark.parametrize(
    ("cell", "kept"),
    [
        (ENV_CELL, 'os.environ["PINECONE_API_KEY"] = "[masked]"'),
        (f"os.environ['API_KEY']='{PASSWORD}'", "os.environ['API_KEY']='[masked]'"),
        (f'config["db"]["password"] = "{PASSWORD}"', 'config["db"]["password"]'),
        (f'os.environ.setdefault("API_KEY", "{PASSWORD}")', 'setdefault("API_KEY", '),
        (f'os.putenv("API_KEY", "{PASSWORD}")', 'os.putenv("API_KEY", '),
        (f"%env API_KEY={PASSWORD}", "%env API_KEY=[masked]"),
        (f"%env API_KEY {PASSWORD}", "%env API_KEY [masked]"),
        (f"%set_env API_KEY {PASSWORD}", "%set_env API_KEY [masked]"),
        (f"!export API_KEY={PASSWORD} && python train.py", "!export API_KEY=[masked] &&"),
        (f"%%bash\nexport DEBUG=1 API_KEY={PASSWORD}", "export DEBUG=1 API_KEY=[masked]"),
        (
            f"get_ipython().run_line_magic('env', 'API_KEY={PASSWORD}')",
            "run_line_magic('env', 'API_KEY=[masked]')",
        ),
        (f'db_pass = "{PASSWORD}"', 'db_pass = "[masked]"'),
        (f'api_key: str = "{PASSWORD}"', 'api_key: str = "[masked]"'),
        (f'token: Optional[str] = "{PASSWORD}"', "token: Optional[str] ="),
        (f'api_key = r"{PASSWORD}"', 'api_key = r"[masked]"'),
        (f"api_key = b'{PASSWORD}'", "api_key = b'[masked]'"),
        (f'password = """{PASSWORD}"""', 'password = """[masked]"""'),
        (f"password = {TRIPLE}\n{PASSWORD}\n{TRIPLE}", f"password = {TRIPLE}[masked]{TRIPLE}"),
        (f'auth = ("ann", "{PASSWORD}")', "auth = ("),
        (f'headers = {{"Cookie": "{PASSWORD}"}}', '"Cookie": "[masked]"'),
        (f'password = "a\\"{PASSWORD}"', 'password = "[masked]"'),
    ],
)
def test_last_error_masks_a_key_set_in_the_cell(cell: str, kept: str) -> None:
    report = no_secret(last_error_report(cell))
    assert kept in report, report
    assert "index = pc.Index('x')" in report


@pytest.mark.parametrize(
    "code",
    [
        "token = get_token()\nconnect(token)",
        'os.environ["API_KEY"] = key',
        'x = os.getenv("API_KEY")',
        'df[["api_key", "user"]]',
        'if token == "abc":\n    pass',
        "print(token[:4])",
        'log(f"token={token}", "password=%s" % pw)',
        'join_key = "customer_id"',
        "df.export(path)",
    ],
)
def test_code_without_a_literal_secret_is_left_as_written(code: str) -> None:
    assert mask_keys(code, unquoted=False) == code


# --- 6. realistic names: a password in db_pass, a session in cookies ---------------


def test_db_pass_and_a_cookies_dict_are_masked() -> None:
    text = no_secret(
        model_sees(
            db_pass=PASSWORD,
            cookies={"sessionid": PASSWORD, "theme": "dark"},
            headers={"Cookie": f"sessionid={PASSWORD}", "Accept": "text/html"},
            jar={"JSESSIONID": PASSWORD},
        )
    )
    assert "'Accept': 'text/html'" in text


# --- 7. keys of data: merge keys and a column named key ----------------------------


def test_data_keys_and_a_merge_key_column_are_shown() -> None:
    # pandas' own merge example: a column named key
    left = pd.DataFrame({"key": ["K0", "K1"], "A": ["A0", "A1"]})
    text = model_sees(
        left=left,
        k=left["key"],
        by_key=left.set_index("key"),
        t=left.T,
        join_key="customer_id",
        primary_key="order_id",
        cache_key="user:42",
    )
    for shown in ("K0", "K1", "A0", "customer_id", "order_id", "user:42"):
        assert shown in text, shown


def test_a_key_column_of_tokens_and_a_lone_key_variable_stay_masked() -> None:
    token = "a1B2c3D4e5F6g7H8i9J0k1L2"
    keys = pd.DataFrame({"service": ["maps"], "key": [token]})
    text = no_secret(
        model_sees(keys=keys, k=keys["key"], t=keys.T, key=PASSWORD, d={"key": PASSWORD}),
        token,
        PASSWORD,
    )
    assert "maps" in text
