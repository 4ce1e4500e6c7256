"""The Herdr stand-in, test/bin/herdr: what it models, and from which of Herdr's sources and
commits, is told there. This is its code, a port of the node script it was, that answers byte for
byte as that one did: JSON as JSON.stringify writes it (no spaces, numbers as JavaScript prints
them, object keys in JavaScript's order), JavaScript's string, path (node's path.join/dirname),
Number() and regular-expression semantics, node's spawn (libuv and glibc's execvp: setsid,
/dev/null for stdio, signals reset, PATH from the child's env) and timestamps as
Date#toISOString. It imports only what python has built in or loads anyway (posix, _json,
_signal, errno, time): `import json`, `re` or `os` would cost more than the rest of a call.
"""

import _json
import _signal
import errno
import posix
import sys
import time

# ---- JavaScript's values, strings and numbers ----


class _Undefined:
    """JavaScript's undefined (None is null): JSON.stringify leaves it out of objects."""

    __slots__ = ()

    def __bool__(self):
        return False

    def __repr__(self):
        return "undefined"


U = _Undefined()
NAN = float("nan")
INF = float("inf")
SAFE = 2**53
# JavaScript's \s, and what Number() trims.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
LINE_END = "\n\r\u2028\u2029"


def norm(f):
    """A JavaScript number held as an int when it is one (and exact), else a float."""
    if f == f and f not in (INF, -INF) and f == int(f) and -SAFE <= f <= SAFE:
        return int(f)
    return f


def num_str(x):
    """Number#toString."""
    if type(x) is int and -SAFE <= x <= SAFE:
        return str(x)
    x = float(x)
    if x != x:
        return "NaN"
    if x == INF:
        return "Infinity"
    if x == -INF:
        return "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    r = repr(abs(x))
    e = 0
    if "e" in r:
        r, ex = r.split("e")
        e = int(ex)
    ip, _, fp = r.partition(".")
    digits = ip + fp
    n = len(ip) + e
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * -n + digits
    else:
        e2 = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e2 >= 0 else "-") + str(abs(e2))
    return sign + s


def js_str(v):
    """String(v), as a template literal interpolates it."""
    t = type(v)
    if t is str:
        return v
    if v is None:
        return "null"
    if v is U:
        return "undefined"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is int or t is float:
        return num_str(v)
    if t is list:
        return join_js(v, ",")
    return "[object Object]"


def join_js(items, sep):
    """Array#join: null and undefined as ''."""
    return sep.join("" if x is None or x is U else js_str(x) for x in items)


def _digits_in(s, allowed):
    return s != "" and all(c in allowed for c in s)


DEC = "0123456789"


def _str_number(s):
    s = s.strip(JS_SPACE)
    if s == "":
        return 0
    if len(s) > 1 and s[0] == "0" and s[1] in "xXoObB":
        base, allowed = {"x": (16, DEC + "abcdefABCDEF"), "o": (8, "01234567"), "b": (2, "01")}[s[1].lower()]
        if not _digits_in(s[2:], allowed):
            return NAN
        try:
            return norm(float(int(s[2:], base)))
        except OverflowError:
            return INF
    body = s[1:] if s[0] in "+-" else s
    if body == "Infinity":
        return -INF if s[0] == "-" else INF
    body = body.replace("E", "e")
    mant, e, exp = body.partition("e")
    if e:
        if exp[:1] in ("+", "-"):
            exp = exp[1:]
        if not _digits_in(exp, DEC):
            return NAN
    ip, _, fp = mant.partition(".")
    if not (ip == "" or _digits_in(ip, DEC)) or not (fp == "" or _digits_in(fp, DEC)):
        return NAN
    if ip == "" and fp == "":
        return NAN
    return norm(float(s))


def js_number(v):
    """Number(v)."""
    t = type(v)
    if t is int or t is float:
        return v
    if t is str:
        return _str_number(v)
    if v is None or v is False:
        return 0
    if v is True:
        return 1
    if t is list:
        return _str_number(join_js(v, ","))
    return NAN


def js_min(a, b):
    return NAN if a != a or b != b else min(a, b)


def js_max(a, b):
    return NAN if a != a or b != b else max(a, b)


def truthy(v):
    """JavaScript's truthiness (an empty array or object is true, NaN false)."""
    t = type(v)
    if t is list or t is dict:
        return True
    if t is float:
        return v == v and v != 0
    return bool(v)


def nullish(v):
    return v is None or v is U


def g(o, key):
    """o.key, undefined when o has none."""
    return o.get(key, U)


def spread(v):
    """{...v}."""
    if type(v) is dict:
        return dict(v)
    if type(v) is str:
        return {str(i): c for i, c in enumerate(utf16_units(v))}
    if type(v) is list:
        return {str(i): x for i, x in enumerate(v)}
    return {}


def utf16_units(s):
    out = []
    for c in s:
        o = ord(c)
        if o > 0xFFFF:
            o -= 0x10000
            out.append(chr(0xD800 + (o >> 10)))
            out.append(chr(0xDC00 + (o & 0x3FF)))
        else:
            out.append(c)
    return out


def tail(items, n):
    """items.slice(-n)."""
    start = -n
    if start != start:
        start = 0
    start = int(max(len(items) + start, 0)) if start < 0 else int(min(start, len(items)))
    return items[start:]


def substitute(s, pattern, replacement):
    """s.replace(pattern, replacement) for a string pattern: the first match, with `$$`, `$&`,
    `` $` `` and `$'` in the replacement as JavaScript reads them."""
    i = s.find(pattern)
    if i < 0:
        return s
    if "$" in replacement:
        out = []
        j = 0
        while j < len(replacement):
            c = replacement[j]
            nxt = replacement[j + 1 : j + 2]
            if c == "$" and nxt == "$":
                out.append("$")
                j += 2
            elif c == "$" and nxt == "&":
                out.append(pattern)
                j += 2
            elif c == "$" and nxt == "`":
                out.append(s[:i])
                j += 2
            elif c == "$" and nxt == "'":
                out.append(s[i + len(pattern) :])
                j += 2
            else:
                out.append(c)
                j += 1
        replacement = "".join(out)
    return s[:i] + replacement + s[i + len(pattern) :]


def utf8(s):
    """A JavaScript string's UTF-8 bytes (a lone surrogate as U+FFFD, as node writes it)."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s).encode("utf-8")


def from_os(s):
    """An argument as node decodes it: UTF-8, invalid bytes as U+FFFD."""
    try:
        b = s.encode(sys.getfilesystemencoding(), "surrogateescape")
    except UnicodeEncodeError:
        return s
    return b.decode("utf-8", "replace")


# ---- JSON, as JSON.parse reads it and JSON.stringify writes it ----


def _parse_int(s):
    v = int(s)
    return v if -SAFE <= v <= SAFE else float(s)


def _parse_float(s):
    return norm(float(s))


def _no_constant(s):
    raise ValueError(f"Unexpected token in JSON: {s}")


class _Decoding:
    strict = True
    object_hook = None
    object_pairs_hook = None


_ctx = _Decoding()
_ctx.parse_int = _parse_int
_ctx.parse_float = _parse_float
_ctx.parse_constant = _no_constant
_scan = _json.make_scanner(_ctx)
JSON_SPACE = " \t\n\r"


def parse(text):
    """JSON.parse (raises on what it refuses)."""
    start = len(text) - len(text.lstrip(JSON_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError(f"Unexpected token in JSON at position {start}") from None
    if text[end:].strip(JSON_SPACE):
        raise ValueError(f"Unexpected non-whitespace character after JSON at position {end}")
    return value


def _quote(s):
    q = _json.encode_basestring(s)
    try:
        q.encode("utf-8")
    except UnicodeEncodeError:
        q = "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in q)
    return q


def _index_key(k):
    """An array index, which a JavaScript object lists first, in numeric order."""
    return k.isdigit() and k.isascii() and (k == "0" or k[0] != "0") and int(k) < 2**32 - 1


def _keys(d):
    keys = list(d)
    if any(k[:1].isdigit() for k in keys):
        first = sorted((k for k in keys if _index_key(k)), key=int)
        if first:
            keys = first + [k for k in keys if not _index_key(k)]
    return keys


def _dump(v, indent, at):
    t = type(v)
    if t is str:
        return _quote(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is int or t is float:
        if t is float and (v != v or v in (INF, -INF)):
            return "null"
        return num_str(v)
    if v is U:
        return None
    inner = at + indent
    if t is list:
        if not v:
            return "[]"
        items = []
        for x in v:
            s = _dump(x, indent, inner)
            items.append("null" if s is None else s)
        if not indent:
            return "[" + ",".join(items) + "]"
        return "[\n" + inner + (",\n" + inner).join(items) + "\n" + at + "]"
    if t is dict:
        items = []
        colon = ": " if indent else ":"
        for k in _keys(v):
            s = _dump(v[k], indent, inner)
            if s is not None:
                items.append(_quote(k) + colon + s)
        if not items:
            return "{}"
        if not indent:
            return "{" + ",".join(items) + "}"
        return "{\n" + inner + (",\n" + inner).join(items) + "\n" + at + "}"
    return None


def stringify(v, indent=""):
    """JSON.stringify(v) or, with indent, JSON.stringify(v, null, indent.length)."""
    return _dump(v, indent, "")


# ---- node's path (posix) ----


def _normalize_string(path, allow_above_root):
    res = ""
    last_segment_length = 0
    last_slash = -1
    dots = 0
    code = ""
    i = 0
    n = len(path)
    while i <= n:
        if i < n:
            code = path[i]
        elif code == "/":
            break
        else:
            code = "/"
        if code == "/":
            if last_slash == i - 1 or dots == 1:
                pass
            elif dots == 2:
                if len(res) < 2 or last_segment_length != 2 or res[-1] != "." or res[-2] != ".":
                    if len(res) > 2:
                        last_slash_index = res.rfind("/")
                        if last_slash_index == -1:
                            res = ""
                            last_segment_length = 0
                        else:
                            res = res[:last_slash_index]
                            last_segment_length = len(res) - 1 - res.rfind("/")
                        last_slash = i
                        dots = 0
                        i += 1
                        continue
                    elif len(res) != 0:
                        res = ""
                        last_segment_length = 0
                        last_slash = i
                        dots = 0
                        i += 1
                        continue
                if allow_above_root:
                    res += "/.." if len(res) > 0 else ".."
                    last_segment_length = 2
            else:
                if len(res) > 0:
                    res += "/" + path[last_slash + 1 : i]
                else:
                    res = path[last_slash + 1 : i]
                last_segment_length = i - last_slash - 1
            last_slash = i
            dots = 0
        elif code == "." and dots != -1:
            dots += 1
        else:
            dots = -1
        i += 1
    return res


def normalize(path):
    if path == "":
        return "."
    absolute = path[0] == "/"
    trailing = path[-1] == "/"
    path = _normalize_string(path, not absolute)
    if path == "":
        if absolute:
            return "/"
        return "./" if trailing else "."
    if trailing:
        path += "/"
    return "/" + path if absolute else path


def join(*parts):
    """path.join (its arguments are strings)."""
    for p in parts:
        if type(p) is not str:
            raise TypeError(f'The "path" argument must be of type string. Received {js_str(p)}')
    kept = [p for p in parts if p]
    return normalize("/".join(kept)) if kept else "."


def dirname(path):
    if type(path) is not str:
        raise TypeError(f'The "path" argument must be of type string. Received {js_str(path)}')
    if path == "":
        return "."
    has_root = path[0] == "/"
    end = -1
    matched_slash = True
    for i in range(len(path) - 1, 0, -1):
        if path[i] == "/":
            if not matched_slash:
                end = i
                break
        else:
            matched_slash = False
    if end == -1:
        return "/" if has_root else "."
    if has_root and end == 1:
        return "//"
    return path[:end]


# ---- the process: its environment, files, output and clock ----


def _environment():
    """process.env: the environment as the process was given it."""
    env = {}
    for k, v in posix.environ.items():
        env[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
    if "LC_CTYPE" in env:
        # PEP 538: python started in the C locale sets LC_CTYPE itself (node does not); what the
        # process was given is still in /proc/self/environ.
        try:
            given = _read(b"/proc/self/environ").split(b"\0")
        except OSError:
            return env
        for entry in given:
            if entry.startswith(b"LC_CTYPE="):
                env["LC_CTYPE"] = entry[9:].decode("utf-8", "replace")
                break
        else:
            del env["LC_CTYPE"]
    return env


def _read(path):
    fd = posix.open(path, posix.O_RDONLY)
    try:
        chunks = []
        while True:
            b = posix.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
    finally:
        posix.close(fd)
    return b"".join(chunks)


ENV = _environment()
ARGV = [from_os(a) for a in sys.argv[1:]]


def now():
    """Date.now()."""
    return time.time_ns() // 1000000


def iso_now():
    """new Date().toISOString()."""
    ms = now()
    t = time.gmtime(ms // 1000)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], ms % 1000)


def sleep_ms(ms):
    """Atomics.wait's timeout: NaN or Infinity waits for ever, a negative one not at all."""
    ms = js_number(ms)
    if ms != ms or ms == INF:
        while True:
            time.sleep(86400)
    if ms <= 0:
        return
    end = time.monotonic() + ms / 1000
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 86400))


def write_out(fd, text):
    data = utf8(text)
    while data:
        try:
            n = posix.write(fd, data)
        except OSError:
            return  # node drops what a closed pipe does not take, and exits as it meant to
        data = data[n:]


def read_file(path):
    """fs.readFileSync(path, "utf8")."""
    return _read(utf8(path)).decode("utf-8", "replace")


def _write_file(path, text, flags):
    fd = posix.open(utf8(path), posix.O_WRONLY | posix.O_CREAT | flags, 0o666)
    try:
        data = utf8(text)
        while data:
            data = data[posix.write(fd, data) :]
    finally:
        posix.close(fd)


def write_file(path, text):
    """fs.writeFileSync."""
    _write_file(path, text, posix.O_TRUNC)


def append_file(path, text):
    """fs.appendFileSync."""
    _write_file(path, text, posix.O_APPEND)


def mkdir_p(path):
    """fs.mkdirSync(path, {recursive: true})."""
    b = utf8(path)
    try:
        posix.mkdir(b, 0o777)
    except FileExistsError:
        if posix.stat(b).st_mode & 0o170000 != 0o040000:
            raise
    except FileNotFoundError:
        parent = dirname(path)
        if parent == path:
            raise
        mkdir_p(parent)
        try:
            posix.mkdir(b, 0o777)
        except FileExistsError:
            if posix.stat(b).st_mode & 0o170000 != 0o040000:
                raise


def cwd():
    """process.cwd()."""
    return posix.getcwdb().decode("utf-8", "replace")


def homedir():
    """os.homedir(): $HOME, else the password database's."""
    if "HOME" in ENV:
        return ENV["HOME"]
    import pwd

    return pwd.getpwuid(posix.getuid()).pw_dir.encode(sys.getfilesystemencoding(), "surrogateescape").decode("utf-8", "replace")


def random_uuid():
    """crypto.randomUUID()."""
    b = bytearray(posix.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _node_like_process():
    # What node does at its start: stdio that is closed becomes /dev/null (so that no file this
    # opens takes fd 1), signals as their defaults (SIGPIPE and SIGXFSZ ignored).
    for fd in (0, 1, 2):
        try:
            posix.fstat(fd)
        except OSError:
            posix.open(b"/dev/null", posix.O_RDWR)
    ignored = (_signal.SIGPIPE, getattr(_signal, "SIGXFSZ", _signal.SIGPIPE))
    for n in range(1, 32):
        if n in (_signal.SIGKILL, _signal.SIGSTOP):
            continue
        try:
            _signal.signal(n, _signal.SIG_IGN if n in ignored else _signal.SIG_DFL)
        except (OSError, ValueError, RuntimeError):
            pass


_node_like_process()

# ---- the stand-in ----

argv = ARGV
violations = []
STATE = ENV.get("HERDR_STANDIN_STATE")
LOG = ENV.get("HERDR_STANDIN_LOG")


def name_ok(name):
    """/^[a-z][a-z0-9_-]{0,31}$/"""
    return (
        1 <= len(name) <= 32
        and "a" <= name[0] <= "z"
        and all("a" <= c <= "z" or "0" <= c <= "9" or c in "_-" for c in name[1:])
    )


VERSION = ENV.get("HERDR_STANDIN_VERSION", "0.8.2")
# PROTOCOL_VERSION (src/protocol/wire.rs) per release; an unattached pane's rows (0.8.2's
# headless 120×40 virtual terminal, #2828).
RELEASES = {
    "0.8.0": {"protocol": 19, "rows": 24},
    "0.8.2": {"protocol": 20, "rows": 40},
    "0.9.3": {"protocol": 22, "rows": 40},
}
# The node version looked VERSION up on a plain object: Object.prototype's names were found
# there too, as a release with no protocol and no rows.
OBJECT_PROTOTYPE = (
    "constructor",
    "__proto__",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toString",
    "valueOf",
    "toLocaleString",
    "__defineGetter__",
    "__defineSetter__",
    "__lookupGetter__",
    "__lookupSetter__",
)
if VERSION not in RELEASES and VERSION not in OBJECT_PROTOTYPE:
    write_out(2, f"herdr stand-in: unknown HERDR_STANDIN_VERSION {VERSION}\n")
    posix._exit(2)
PROTOCOL = RELEASES[VERSION]["protocol"] if VERSION in RELEASES else U
ROWS = RELEASES[VERSION]["rows"] if VERSION in RELEASES else U
V09 = VERSION.startswith("0.9.")
# AGENT_PROMPT_EFFECT_TIMEOUT_MS (src/api/wait.rs, 0.8.0 through 0.9).
EFFECT_MS = 5000
EFFECT_WAIT_MS = js_number(ENV.get("HERDR_STANDIN_EFFECT_MS", EFFECT_MS))
KEYS = ["enter", "esc", "escape", "tab", "up", "down", "left", "right", "backspace", "space", "ctrl+c", "ctrl+d", "ctrl+u"]


def has_control(s):
    """/[\\u0000-\\u001f\\u007f]/: what real Herdr refuses."""
    return any(c < " " or c == "\x7f" for c in s)


STATUSES = ["idle", "working", "blocked", "done", "unknown"]
KINDS = [
    "claude",
    "codex",
    "pi",
    "omp",
    "opencode",
    "copilot",
    "devin",
    "hermes",
    "qodercli",
    "amp",
]


def env_number(name, default):
    """Number(process.env[name] ?? default)."""
    return js_number(ENV.get(name, default))


def log(code):
    if not LOG:
        return
    append_file(LOG, stringify({"at": iso_now(), "argv": argv, "exit": code, "violations": violations}) + "\n")


def finish(code):
    log(code)
    posix._exit(code)


def usage(message):
    """Bad syntax: a usage line on stderr, exit 2 (as the real CLI's parsers do)."""
    write_out(2, f"{message}\n")
    finish(2)


request_id = "cli"


def fail(code, message):
    write_out(2, stringify({"id": request_id, "error": {"code": code, "message": message}}) + "\n")
    finish(1)


def answer(result):
    fault = fault_for()
    if fault == "malformed":
        write_out(1, f'{{"id":"{request_id}","result":{{"type":')
        finish(0)
    if fault == "wrong_shape":
        write_out(1, stringify({"id": request_id, "result": {"type": g(result, "type")}}) + "\n")
        finish(0)
    write_out(1, stringify({"id": request_id, "result": result}) + "\n")
    finish(0)


def fault_for():
    raw = ENV.get("HERDR_STANDIN_FAULT")
    if not raw:
        return U
    key = " ".join(argv[:2])
    faults = parse(raw)
    if faults is None:
        raise TypeError(f"Cannot read properties of null (reading '{key}')")
    if type(faults) is dict and key in faults:
        return faults[key]
    if key == "__proto__" and type(faults) in (dict, list):
        return {}  # Object.prototype (or Array.prototype): an object with no code or message
    return U


# ---- state ----


def load():
    if not STATE:
        fail(
            "server_not_running",
            "no herdr server is running at /tmp/herdr-standin.sock; run `herdr` to start or attach it",
        )
    try:
        state = parse(read_file(STATE))
    except FileNotFoundError:
        # A first call starts the server, of this client's version.
        state = {"seq": 0, "prompts": 0, "workspaces": [], "tabs": [], "panes": [], "agents": []}
    if nullish(g(state, "server")):
        state["server"] = {"version": VERSION, "protocol": PROTOCOL}
    if ENV.get("HERDR_STANDIN_UPGRADE") == "1" and V09 and state["server"]["version"].startswith("0.8."):
        upgrade_server(state)
    server = js_number(ENV["HERDR_STANDIN_PROTOCOL"] if "HERDR_STANDIN_PROTOCOL" in ENV else g(state["server"], "protocol"))
    if server != PROTOCOL:
        fail("protocol_mismatch", mismatch_message(server))
    return state


def mismatch_message(server):
    """`mismatch_response` (src/cli/protocol_guard.rs, unchanged through 0.9: a 0.9 client against
    an 0.8 server answers "client protocol 22 is newer than server protocol 20; restart…"): the
    side named older is the one to replace. The restart guidance is
    `active_restart_after_update_guidance` (src/session.rs)."""
    if PROTOCOL is not U and server > PROTOCOL:
        return f"client protocol {js_str(PROTOCOL)} is older than server protocol {js_str(server)}; upgrade the Herdr client before using this command"
    socket = ENV.get("HERDR_SOCKET_PATH")
    session = ENV.get("HERDR_SESSION")
    if socket:
        restart = f"Run `HERDR_SOCKET_PATH={socket} herdr server stop`, then restart Herdr with the same socket override."
    elif session:
        restart = f"Run `herdr session stop {session}`, then run `herdr session attach {session}` again."
    else:
        restart = "Run `herdr server stop`, then run `herdr` again."
    return f"client protocol {js_str(PROTOCOL)} is newer than server protocol {js_str(server)}; restart the Herdr server before using this command. Stop the old server to use the new version.\nStopping exits pane processes.\n{restart}"


def upgrade_server(state):
    """An 0.8 server handed to 0.9 in place: ids of workspaces, tabs and panes survive, terminal ids
    do not, and no agent stays registered (its process keeps running in its pane)."""
    state["server"] = {"version": VERSION, "protocol": PROTOCOL}
    for p in state["panes"]:
        p["terminal_id"] = f"term-{js_str(g(p, 'terminal_id'))}-g1"
    for a in state["agents"]:
        a["registered"] = False
        a["name"] = None
    save(state)


def save(state):
    tmp = f"{STATE}.{posix.getpid()}.tmp"
    write_file(tmp, stringify(state, "  "))
    posix.rename(utf8(tmp), utf8(STATE))


def alive(pid):
    if not truthy(pid):
        return False
    if type(pid) is not int:
        return False
    try:
        posix.kill(pid, 0)
    except (OSError, OverflowError):
        return False
    try:
        stat = read_file(f"/proc/{pid}/stat")
        st = stat[stat.rfind(")") + 2 :].split(" ")[0]
        return st != "Z" and st != "X"
    except OSError:
        return True  # no /proc (macOS): kill(0) said it exists


def live_processes(state):
    """Processes started as agents that still run, registered or not (a pane's foreground job)."""
    return [a for a in state["agents"] if alive(g(a, "pid"))]


def live_agents(state):
    """Live agents only: an agent whose process ended is gone, as when Claude exits in its pane; one
    an upgrade unregistered is no agent any more."""
    return [a for a in live_processes(state) if g(a, "registered") is not False]


# The status Herdr's screen detection gives a Claude pane with no dialog open, from prose alone:
# rule `legacy_no_prompt_blocker` (priority 300, region whole_recent) of
# src/detect/manifests/claude.toml at 1c76079f, unchanged in 0.9 (#4064). It has no
# `visible_blocker`: it fires on text, not on a dialog.
LEGACY_BLOCKER = [
    lambda t: "do you want to" in t and ("yes" in t or "❯" in t),
    lambda t: "would you like to" in t and ("yes" in t or "❯" in t),
    lambda t: "waiting for permission" in t,
    lambda t: "do you want to allow this connection?" in t,
    lambda t: "tab to amend" in t,
    lambda t: "ctrl+e to explain" in t,
    lambda t: "do you want to proceed?" in t and "esc to cancel" in t,
    lambda t: "review your answers" in t,
    lambda t: "skip interview and plan immediately" in t,
]


def prompt_line(text):
    """/^\\s*❯\\s*$/m: a line that is a bare prompt (\\s as JavaScript's, which spans lines)."""
    i = text.find("❯")
    while i >= 0:
        r = i
        while r > 0 and text[r - 1] in JS_SPACE:
            r -= 1
        e = i + 1
        while e < len(text) and text[e] in JS_SPACE:
            e += 1
        before = r == 0 or any(c in LINE_END for c in text[r:i])
        after = e == len(text) or any(c in LINE_END for c in text[i + 1 : e])
        if before and after:
            return True
        i = text.find("❯", i + 1)
    return False


def lower(s):
    """String#toLowerCase."""
    return s.lower()


def status_of(a):
    """What Herdr reports: a dialog blocks; so, for Claude, does text the fallback rule matches."""
    if truthy(g(a, "dialog")) or truthy(g(a, "asking")):
        return "blocked"
    if g(a, "kind") == "claude":
        screen = g(a, "screen")
        text = lower(join_js([] if nullish(screen) else screen, "\n"))
        if any(rule(text) for rule in LEGACY_BLOCKER) and not prompt_line(text):
            return "blocked"
    return g(a, "status")


def workspace_info(state, w):
    tabs = [t for t in state["tabs"] if g(t, "workspace_id") == g(w, "workspace_id")]
    panes = [p for p in state["panes"] if g(p, "workspace_id") == g(w, "workspace_id")]
    active = g(tabs[0], "tab_id") if tabs else U
    return {
        "workspace_id": g(w, "workspace_id"),
        "number": g(w, "number"),
        "label": g(w, "label"),
        "focused": False,
        "pane_count": len(panes),
        "tab_count": len(tabs),
        "active_tab_id": f"{js_str(g(w, 'workspace_id'))}:t0" if nullish(active) else active,
        "agent_status": "unknown",
    }


def tab_info(state, t):
    return {
        "tab_id": g(t, "tab_id"),
        "workspace_id": g(t, "workspace_id"),
        "number": g(t, "number"),
        "label": g(t, "label"),
        "focused": False,
        "pane_count": len([p for p in state["panes"] if g(p, "tab_id") == g(t, "tab_id")]),
        "agent_status": "unknown",
    }


def find(items, test):
    for x in items:
        if test(x):
            return x
    return None


def agent_of_pane(state, p):
    return find(live_agents(state), lambda a: g(a, "pane_id") == g(p, "pane_id"))


def process_of_pane(state, p):
    """The pane's foreground process started as an agent, registered or not."""
    return find(live_processes(state), lambda a: g(a, "pane_id") == g(p, "pane_id"))


def pane_info(state, p):
    a = agent_of_pane(state, p)
    return {
        "pane_id": g(p, "pane_id"),
        "terminal_id": g(p, "terminal_id"),
        "workspace_id": g(p, "workspace_id"),
        "tab_id": g(p, "tab_id"),
        "focused": False,
        "agent_status": status_of(a) if a is not None else "unknown",
        "revision": g(a, "seq") if a is not None else 0,
        "cwd": g(p, "cwd"),
        "label": None,
        "agent": g(a, "kind") if a is not None else None,
    }


def agent_info(state, a):
    p = find(state["panes"], lambda x: g(x, "pane_id") == g(a, "pane_id"))
    if p is None:
        raise TypeError("Cannot read properties of undefined (reading 'terminal_id')")
    status = status_of(a)
    info = {
        "terminal_id": g(p, "terminal_id"),
        "agent_status": status,
        "workspace_id": g(p, "workspace_id"),
        "tab_id": g(p, "tab_id"),
        "pane_id": g(p, "pane_id"),
        "focused": False,
        "revision": g(a, "seq"),
        "state_change_seq": g(a, "seq"),
        "name": g(a, "name"),
        "agent": g(a, "kind"),
        "cwd": g(p, "cwd"),
        "launch_pending": False,
        "interactive_ready": status == "idle" or status == "done" or status == "working",
    }
    # Claude's session begins once it is past its trust dialog.
    if g(a, "kind") == "claude" and not truthy(g(a, "dialog")):
        info["agent_session"] = {"source": "herdr:claude", "agent": g(a, "kind"), "kind": "id", "value": g(a, "session_id")}
    return info


def new_pane(state, w, tab_id, pane_cwd, env):
    state["seq"] += 1
    pane = {
        "pane_id": f"{js_str(g(w, 'workspace_id'))}:p{js_str(state['seq'])}",
        "terminal_id": f"term-{js_str(state['seq'])}",
        "workspace_id": g(w, "workspace_id"),
        "tab_id": tab_id,
        "cwd": pane_cwd,
        "env": {**spread(g(w, "env")), **env},
        "created_ms": now(),
    }
    state["panes"].append(pane)
    return pane


def new_tab(state, w, label, tab_cwd, env):
    state["seq"] += 1
    number = len([t for t in state["tabs"] if g(t, "workspace_id") == g(w, "workspace_id")]) + 1
    tab = {
        "tab_id": f"{js_str(g(w, 'workspace_id'))}:t{js_str(state['seq'])}",
        "workspace_id": g(w, "workspace_id"),
        "number": number,
        "label": str(number) if nullish(label) else label,
    }
    state["tabs"].append(tab)
    pane = new_pane(state, w, tab["tab_id"], g(w, "cwd") if nullish(tab_cwd) else tab_cwd, env)
    return tab, pane


# ---- option parsing, in the manner of the real CLI ----


def options(args, spec, positionals=0):
    """Parses `args` against `spec` ({"--flag": "value"|"bool"|"multi"}); exit 2 on anything else."""
    out = {"_": []}
    i = 0
    while i < len(args):
        a = args[i]
        kind = spec.get(a)
        if kind == "bool":
            out[a] = True
            i += 1
        elif kind == "value" or kind == "multi":
            if i + 1 >= len(args):
                usage(f"missing value for {a}")
            v = args[i + 1]
            if kind == "multi":
                out.setdefault(a, []).append(v)
            else:
                out[a] = v
            i += 2
        elif a.startswith("-"):
            usage(f"unknown option: {a}")
        elif len(out["_"]) < positionals:
            out["_"].append(a)
            i += 1
        else:
            usage(f"unexpected argument: {a}")
    return out


def env_pairs(items=None):
    env = {}
    for raw in items or []:
        eq = raw.find("=")
        if eq < 0:
            usage("env must use KEY=VALUE")
        if eq == 0:
            usage("env key must not be empty")
        env[raw[:eq]] = raw[eq + 1 :]
    return env


def all_digits(value):
    """/^\\d+$/ (JavaScript's \\d: ASCII digits)."""
    return _digits_in(value, DEC)


def timeout_of(value):
    if not all_digits(value):
        usage(f"invalid value for --timeout: {value}")
    return js_number(value)


def munge(path):
    """path.replace(/[^A-Za-z0-9]/g, "-"): one dash a UTF-16 unit."""
    return "".join(
        c if c.isascii() and c.isalnum() else ("--" if ord(c) > 0xFFFF else "-") for c in path
    )


def project_folder(env, folder):
    """Claude Code's project folder name: CLAUDE_CODE_PROJECT_DIR_NAME in its env wins."""
    override = env.get("CLAUDE_CODE_PROJECT_DIR_NAME", U)
    if truthy(override) and "/" not in js_str(override) and "\\" not in js_str(override) and override != "." and override != "..":
        return override
    return munge(js_str(folder))


# ---- commands ----


def workspace_command(sub, args):
    global request_id
    request_id = f"cli:workspace:{js_str(sub)}"
    if sub == "list":
        if args:
            usage("usage: herdr workspace list")
        state = load()
        answer({"type": "workspace_list", "workspaces": [workspace_info(state, w) for w in state["workspaces"]]})
    if sub == "create":
        o = options(
            args,
            {
                "--cwd": "value",
                "--label": "value",
                "--focus": "bool",
                "--no-focus": "bool",
                "--env": "multi",
            },
        )
        state = load()
        state["seq"] += 1
        count = len(state["workspaces"])
        w = {
            "workspace_id": f"w{js_str(state['seq'])}",
            "number": count + 1,
            "label": o["--label"] if "--label" in o else f"workspace {count + 1}",
            "cwd": o["--cwd"] if "--cwd" in o else cwd(),
            "env": env_pairs(o.get("--env")),
        }
        state["workspaces"].append(w)
        tab, pane = new_tab(state, w, U, w["cwd"], {})
        save(state)
        answer(
            {
                "type": "workspace_created",
                "workspace": workspace_info(state, w),
                "tab": tab_info(state, tab),
                "root_pane": pane_info(state, pane),
            }
        )
    if sub == "get":
        o = options(args, {}, 1)
        if len(o["_"]) != 1:
            usage("usage: herdr workspace get <workspace_id>")
        state = load()
        w = find(state["workspaces"], lambda x: g(x, "workspace_id") == o["_"][0])
        if w is None:
            fail("workspace_not_found", f"workspace {o['_'][0]} not found")
        answer({"type": "workspace_info", "workspace": workspace_info(state, w)})
    usage(
        "herdr workspace commands:\n  herdr workspace list\n  herdr workspace create [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus] [--no-focus]\n  herdr workspace get <workspace_id>",
    )


def tab_command(sub, args):
    global request_id
    request_id = f"cli:tab:{js_str(sub)}"
    if sub == "create":
        o = options(
            args,
            {
                "--workspace": "value",
                "--cwd": "value",
                "--label": "value",
                "--focus": "bool",
                "--no-focus": "bool",
                "--env": "multi",
            },
        )
        env = env_pairs(o.get("--env"))
        state = load()
        wid = o["--workspace"] if "--workspace" in o else ENV.get("HERDR_WORKSPACE_ID", U)
        w = find(state["workspaces"], lambda x: g(x, "workspace_id") == wid) if wid else (state["workspaces"][0] if state["workspaces"] else None)
        if w is None:
            fail("workspace_not_found", f"workspace {'(focused)' if nullish(wid) else wid} not found")
        tab, pane = new_tab(state, w, o.get("--label", U), o.get("--cwd", U), env)
        save(state)
        answer({"type": "tab_created", "tab": tab_info(state, tab), "root_pane": pane_info(state, pane)})
    if sub == "list":
        o = options(args, {"--workspace": "value"})
        state = load()
        tabs = [t for t in state["tabs"] if not o.get("--workspace") or g(t, "workspace_id") == o["--workspace"]]
        answer({"type": "tab_list", "tabs": [tab_info(state, t) for t in tabs]})
    usage(
        "herdr tab commands:\n  herdr tab list [--workspace <workspace_id>]\n  herdr tab create [--workspace <workspace_id>] [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus] [--no-focus]",
    )


def _kill(pid, sig):
    try:
        posix.kill(pid, sig)
        return True
    except (OSError, OverflowError, TypeError):
        return False


def stop_pid(pid):
    if not alive(pid):
        return
    for target in (-pid, pid):
        if _kill(target, _signal.SIGTERM):
            break
        # not a group leader: try the pid itself
    deadline = now() + 3000
    while alive(pid) and now() < deadline:
        time.sleep(0.05)
    if alive(pid):
        if not _kill(-pid, _signal.SIGKILL):
            _kill(pid, _signal.SIGKILL)  # or gone


# Claude Code 2.1.328's trust dialog (test/fixtures/claude-2.1.328/screens/trust-dialog.txt).
TRUST_DIALOG_21 = [
    "────────────────────────────────────────────────",
    " Accessing workspace:",
    "",
    " {cwd}",
    "",
    " Quick safety check: Is this a project you created or one you trust? (Like your own code, a",
    " well-known open source project, or work from your team). If not, take a moment to review",
    " what's in this folder first.",
    "",
    " Claude Code'll be able to read, edit, and execute files here.",
    "",
    " Security guide",
    "",
    "{no} No, exit",
    "{yes} Yes, I trust this folder",
    "",
    " Enter to confirm · Esc to cancel",
]

TRUST_DIALOG_20 = [
    "────────────────────────────────────────────────",
    " Do you trust the files in this folder?",
    "",
    " {cwd}",
    "",
    " Claude Code may read, write, or execute files contained in this directory.",
    "",
    " ❯ 1. Yes, proceed",
    "   2. No, exit",
    "",
    " Enter to confirm · Esc to cancel",
]

# Claude asking before it runs a command (what Herdr's `bash_permission_prompt` matches).
PERMISSION_DIALOG = [
    "────────────────────────────────────────────────",
    " Bash command",
    "",
    "   git push origin HEAD",
    "   Push the branch",
    "",
    " Do you want to proceed?",
    " ❯ 1. Yes",
    "   2. No, and tell Claude what to do differently (esc)",
    "",
    " Esc to cancel",
]

# Prose a resumed Claude session shows, as in #4064's reproduction: no dialog is open.
QUESTION_PROSE = [
    "● I finished the refactor and the tests pass.",
    "",
    "  Would you like to open a pull request? If yes, I will push the branch.",
]


def screen_of(state, a):
    """The agent's terminal as Herdr renders it: its history, then a dialog or the composer."""
    name = g(a, "name")
    screen = g(a, "screen")
    lines = [
        f"[herdr stand-in] {js_str(g(a, 'kind'))} agent {'(unnamed)' if nullish(name) else js_str(name)} in pane {js_str(g(a, 'pane_id'))}",
        *([] if nullish(screen) else screen),
    ]
    a_cwd = js_str(g(a, "cwd"))
    if truthy(g(a, "dialog")) and ENV.get("HERDR_STANDIN_TRUST_DIALOG_STYLE") == "2.0":
        lines.extend(substitute(line, "{cwd}", a_cwd) for line in TRUST_DIALOG_20)
    elif truthy(g(a, "dialog")):
        yes = g(a, "trustChoice") == "yes"
        for line in TRUST_DIALOG_21:
            lines.append(
                substitute(
                    substitute(substitute(line, "{cwd}", a_cwd), "{no}", "  " if yes else " ❯"),
                    "{yes}",
                    " ❯" if yes else "  ",
                )
            )
    elif truthy(g(a, "asking")):
        lines.extend(PERMISSION_DIALOG)
    else:
        composer = g(a, "composer")
        lines.append(f"> {'' if nullish(composer) else js_str(composer)}")
        lines.append(f"status: {js_str(g(a, 'status'))}")
    return lines


def read_agent(a, target, o, state):
    """`read` of an agent: `visible` is the last screenful; `recent` needs the history, which a
    busy agent on the alternate screen does not have beyond its rows (agent_not_idle)."""
    all_lines = screen_of(state, a)
    source = "visible" if o["source"] is None else o["source"]
    if source == "visible" or source == "detection":
        shown = tail(all_lines, ROWS) if ROWS is not U else all_lines
        return join_js(tail(shown, o["lines"]) if o["lines"] is not None else shown, "\n") + "\n"
    wanted = 80 if o["lines"] is None else o["lines"]
    status = status_of(a)
    busy = status != "idle" and status != "done"
    # 0.9.1 refuses a recent read of a working agent outright (reported, not read in its source).
    alt_screen = ENV.get("HERDR_STANDIN_ALT_SCREEN") == "1" or (V09 and status == "working")
    if alt_screen and busy and ROWS is not U and ROWS < js_min(wanted, 1000):
        fail(
            "agent_not_idle",
            f"cannot read {js_str(wanted)} lines while {target} is {js_str(status)}: its alternate-screen history can only be captured by scrolling while idle. Wait and retry, or use --source visible",
        )
    return join_js(tail(all_lines, wanted), "\n") + "\n"


def read_options(args):
    o = options(
        args,
        {"--source": "value", "--lines": "value", "--format": "value", "--ansi": "bool"},
        1,
    )
    if len(o["_"]) != 1:
        usage("usage: herdr agent read <target> [--source visible|recent|recent-unwrapped] [--lines N] [--format text|ansi] [--ansi]")
    if o.get("--source") and o["--source"] not in ("visible", "recent", "recent-unwrapped", "detection"):
        usage(f"invalid --source: {o['--source']}")
    if "--lines" in o and not all_digits(o["--lines"]):
        usage(f"invalid value for --lines: {o['--lines']}")
    if o.get("--format") and o["--format"] not in ("text", "ansi"):
        usage(f"invalid --format: {o['--format']}")
    return {
        "target": o["_"][0],
        "source": o.get("--source"),
        "lines": js_number(o["--lines"]) if "--lines" in o else None,
    }


def pane_command(sub, args):
    global request_id
    request_id = f"cli:pane:{js_str(sub)}"
    if sub == "get" or sub == "close":
        o = options(args, {}, 1)
        if len(o["_"]) != 1:
            usage(f"usage: herdr pane {sub} <pane_id>")
        state = load()
        p = find(state["panes"], lambda x: g(x, "pane_id") == o["_"][0])
        if p is None:
            fail("pane_not_found", f"pane {o['_'][0]} not found")
        if sub == "get":
            answer({"type": "pane_info", "pane": pane_info(state, p)})
        for a in [x for x in state["agents"] if g(x, "pane_id") == g(p, "pane_id")]:
            stop_pid(g(a, "pid"))
        state["agents"] = [x for x in state["agents"] if g(x, "pane_id") != g(p, "pane_id")]
        state["panes"] = [x for x in state["panes"] if g(x, "pane_id") != g(p, "pane_id")]
        if not any(g(x, "tab_id") == g(p, "tab_id") for x in state["panes"]):
            state["tabs"] = [t for t in state["tabs"] if g(t, "tab_id") != g(p, "tab_id")]
        save(state)
        answer({"type": "ok"})
    if sub == "read":
        o = read_options(args)
        state = load()
        p = find(state["panes"], lambda x: g(x, "pane_id") == o["target"])
        if p is None:
            fail("pane_not_found", f"pane {o['target']} not found")
        # The terminal's text, whether or not Herdr still knows an agent runs there.
        a = process_of_pane(state, p)
        write_out(1, read_agent(a, o["target"], o, state) if a is not None else "$ \n")
        finish(0)
    if sub == "send-text":
        # Raw bytes to the pane's terminal, no agent checks (handle_pane_send_text,
        # src/app/api/panes.rs); `send_ok_request`: nothing printed on success.
        if len(args) < 2:
            usage("usage: herdr pane send-text <pane_id> <text>")
        state = load()
        p = find(state["panes"], lambda x: g(x, "pane_id") == args[0])
        if p is None:
            fail("pane_not_found", f"pane {args[0]} not found")
        a = process_of_pane(state, p)
        # A dialog takes keys, not text; a bare shell would run it (no shell here: dropped).
        if a is not None and not truthy(g(a, "dialog")) and not truthy(g(a, "asking")):
            composer = g(a, "composer")
            a["composer"] = ("" if nullish(composer) else js_str(composer)) + " ".join(args[1:])
        save(state)
        finish(0)
    if sub == "process-info":
        o = options(args, {"--pane": "value", "--current": "bool"})
        pane_id = o["--pane"] if "--pane" in o else (ENV.get("HERDR_PANE_ID") if o.get("--current") else None)
        if not pane_id:
            usage("usage: herdr pane process-info [--pane ID|--current]")
        state = load()
        p = find(state["panes"], lambda x: g(x, "pane_id") == pane_id)
        if p is None:
            fail("pane_not_found", "pane not found")
        a = process_of_pane(state, p)
        # No real shell runs in a stand-in pane, so there is no shell_pid; the agent leads its
        # own process group, as a command run from an interactive shell does.
        info = {"pane_id": g(p, "pane_id")}
        if a is not None:
            info["foreground_process_group_id"] = g(a, "pid")
            info["foreground_processes"] = [
                {"pid": g(a, "pid"), "name": g(a, "kind"), "argv0": g(a, "kind"), "argv": g(a, "argv"), "cwd": g(p, "cwd")}
            ]
        answer({"type": "pane_process_info", "process_info": info})
    usage(
        "herdr pane commands:\n  herdr pane get <pane_id>\n  herdr pane process-info [--pane ID|--current]\n  herdr pane read <pane_id> [--source visible|recent|recent-unwrapped] [--lines N]\n  herdr pane send-text <pane_id> <text>\n  herdr pane close <pane_id>",
    )


def find_agent(state, target):
    return find(live_agents(state), lambda a: g(a, "name") == target or g(a, "pane_id") == target)


def agent_command(sub, args):
    global request_id
    request_id = f"cli:agent:{js_str(sub)}"
    if sub == "list":
        if args:
            usage("usage: herdr agent list")
        state = load()
        answer({"type": "agent_list", "agents": [agent_info(state, a) for a in live_agents(state)]})
    if sub == "get":
        if len(args) != 1:
            usage("usage: herdr agent get <target>")
        state = load()
        a = find_agent(state, args[0])
        if a is None:
            fail("agent_not_found", f"agent {args[0]} not found")
        answer({"type": "agent_info", "agent": agent_info(state, a)})
    if sub == "read":
        o = read_options(args)
        state = load()
        a = find_agent(state, o["target"])
        if a is None:
            fail("agent_not_found", f"agent {o['target']} not found")
        write_out(1, read_agent(a, o["target"], o, state))
        finish(0)
    if sub == "send-keys":
        return agent_send_keys(args)
    if sub == "wait":
        return agent_wait(args)
    if sub == "start":
        return agent_start(args)
    if sub == "prompt":
        return agent_prompt(args)
    usage(
        "\n".join(
            [
                "herdr agent commands:",
                "  herdr agent list",
                "  herdr agent get <target>",
                "  herdr agent read <target> [--source visible|recent|recent-unwrapped|detection] [--lines N] [--format text|ansi] [--ansi]",
                "  herdr agent send-keys <target> <key> [key ...]",
                "  herdr agent wait <target> [--until STATUS]... [--timeout MS]",
                "  herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]",
                "  herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]",
            ]
        ),
    )


# ---- the seat's trust record, as Claude Code keeps it ----

# sh -c HOLD_AT_DIALOG PYTHON CLAUDE_JSON CWD AGENT ARGS…: waits until CLAUDE_JSON trusts CWD (or
# a folder above it, as trusted() reads it), then execs the agent in the same process. (The node
# version ran the same check with node -e.)
HOLD_AT_DIALOG = r'''
check='import sys, _json
class C: pass
c = C(); c.strict = True; c.object_hook = c.object_pairs_hook = None
c.parse_float = float; c.parse_int = int
def refuse(s): raise ValueError(s)
c.parse_constant = refuse
def dirname(x):
    if not x: return "."
    end, seen = -1, False
    for i in range(len(x) - 1, 0, -1):
        if x[i] == "/":
            if seen: end = i; break
        else: seen = True
    if end == -1: return "/" if x[0] == "/" else "."
    return "//" if x[0] == "/" and end == 1 else x[:end]
p = {}
try:
    s = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
    w = " \t\n\r"
    v, e = _json.make_scanner(c)(s, len(s) - len(s.lstrip(w)))
    if s[e:].strip(w): raise ValueError(s)
    p = v["projects"] if v.get("projects") is not None else {}
except Exception:
    pass
x = sys.argv[2]
while True:
    q = p.get(x) if isinstance(p, dict) else None
    if isinstance(q, dict) and q.get("hasTrustDialogAccepted") is True: sys.exit(0)
    if x == dirname(x): sys.exit(1)
    x = dirname(x)'
until "$0" -IS -c "$check" "$1" "$2"; do sleep 0.2; done
shift 2
exec "$@"'''


def claude_json_of(env):
    ccd = env.get("CLAUDE_CONFIG_DIR", U)
    if truthy(ccd):
        return join(ccd, ".claude.json")
    home = env.get("HOME", U)
    return join(home if truthy(home) else homedir(), ".claude.json")


def trusted(env, folder):
    try:
        config = parse(read_file(claude_json_of(env)))
        if config is None:
            return False
        projects = config.get("projects") if type(config) is dict else None
        if projects is None:
            projects = {}
    except Exception:
        return False
    d = folder
    while True:
        entry = projects.get(d) if type(projects) is dict else None
        if type(entry) is dict and entry.get("hasTrustDialogAccepted") is True:
            return True
        if d == dirname(d):
            return False
        d = dirname(d)


def record_trust(file, folder):
    config = {}
    try:
        config = parse(read_file(file))
    except Exception:
        pass  # a first run makes it
    if type(config) is dict:
        if nullish(config.get("projects")):
            config["projects"] = {}
        projects = config["projects"]
        if type(projects) is dict:
            entry = spread(projects.get(folder))
            entry["hasTrustDialogAccepted"] = True
            projects[folder] = entry
        elif type(projects) is not list:
            raise TypeError(f"Cannot create property '{folder}' on {type(projects).__name__} '{js_str(projects)}'")
    elif type(config) is not list:
        raise TypeError(f"Cannot create property 'projects' on {js_str(config)}")
    mkdir_p(dirname(file))
    write_file(file, stringify(config, "  "))


def write_transcript(a, text):
    project = g(a, "project")
    folder = join(g(a, "seat"), "projects", munge(js_str(g(a, "cwd"))) if nullish(project) else project)
    mkdir_p(folder)
    transcript = join(folder, f"{js_str(g(a, 'session_id'))}.jsonl")
    entry = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": g(a, "cwd"),
        "sessionId": g(a, "session_id"),
        "version": "herdr-standin",
        "type": "user",
        "uuid": random_uuid(),
        "timestamp": iso_now(),
        "message": {"role": "user", "content": text},
    }
    append_file(transcript, stringify(entry) + "\n")
    a["transcript"] = transcript
    a["screen"].append(f"> {text}")


def start_args(args):
    """`agent start`'s command line, checked as the real parser does (exit 2 on bad syntax)."""
    usage_line = "usage: herdr agent start <name> --kind KIND --pane ID [--timeout MS] [-- <agent-args...>]"
    name = args[0] if args else None
    if name is None or name.startswith("-"):
        usage(usage_line)
    sep = args.index("--") if "--" in args else -1
    end = len(args) if sep < 0 else sep
    o = options(args[1:end], {"--kind": "value", "--pane": "value", "--timeout": "value"})
    if not o.get("--kind"):
        usage("missing required --kind")
    if not o.get("--pane"):
        usage("missing required --pane")
    if o["--kind"] not in KINDS:
        usage(f"unsupported interactive agent kind: {o['--kind']}")
    timeout = None
    if "--timeout" not in o:
        violations.append("agent start without --timeout")
    else:
        timeout = timeout_of(o["--timeout"])
    return name, o, timeout, ([] if sep < 0 else args[sep + 1 :])


def spawn_detached(file, args, folder, env):
    """child_process.spawn(file, args, {cwd, env, detached: true, stdio: "ignore"}) as node 20 does
    it on Linux (libuv, then glibc's execvp): a new session, /dev/null for stdio, signals at their
    defaults, `file` looked up on the PATH of `env` (an empty entry is the cwd; EACCES remembered,
    a file that is no executable run by /bin/sh). Returns the pid, or raises the child's OSError."""
    for x in [file, *args, *env, *env.values()]:
        if "\0" in js_str(x):
            raise TypeError("The argument must be a string without null bytes")
    env_b = {utf8(k): utf8(js_str(v)) for k, v in env.items()}
    argv_b = [utf8(js_str(x)) for x in [file, *args]]
    if "/" in file:
        candidates = [utf8(file)]
    else:
        path = js_str(env["PATH"]) if "PATH" in env else "/bin:/usr/bin"
        candidates = [utf8(d + "/" + file if d else file) for d in path.split(":")]
    r, w = posix.pipe()
    pid = posix.fork()
    if pid == 0:
        code = errno.ENOENT
        try:
            posix.close(r)
            posix.setsid()
            for fd, flags in ((0, posix.O_RDONLY), (1, posix.O_RDWR), (2, posix.O_RDWR)):
                null = posix.open(b"/dev/null", flags)
                if null != fd:
                    posix.dup2(null, fd)
                    posix.close(null)
                else:
                    posix.set_inheritable(fd, True)
            if folder is not None:
                try:
                    posix.chdir(utf8(folder))
                except OSError as e:
                    code = e.errno
                    raise
            for n in range(1, 32):
                if n not in (_signal.SIGKILL, _signal.SIGSTOP):
                    try:
                        _signal.signal(n, _signal.SIG_DFL)
                    except (OSError, ValueError, RuntimeError):
                        pass
            _signal.pthread_sigmask(_signal.SIG_SETMASK, [])
            eacces = False
            go_on = (errno.ENOENT, errno.ESTALE, errno.ENOTDIR, errno.ENODEV, errno.ETIMEDOUT)
            for c in candidates:
                try:
                    posix.execve(c, argv_b, env_b)
                except OSError as e:
                    code = e.errno
                    if code == errno.ENOEXEC:
                        posix.execve(b"/bin/sh", [b"/bin/sh", c, *argv_b[1:]], env_b)
                    if len(candidates) == 1:
                        raise
                    if code == errno.EACCES:
                        eacces = True
                    elif code not in go_on:
                        raise
            if eacces:
                code = errno.EACCES
        except BaseException:
            pass
        finally:
            try:
                posix.write(w, str(code).encode())
            finally:
                posix._exit(127)
    posix.close(w)
    failed = b""
    while True:
        chunk = posix.read(r, 64)
        if not chunk:
            break
        failed += chunk
    posix.close(r)
    if failed:
        posix.waitpid(pid, 0)
        raise OSError(int(failed), "spawn failed")
    return pid


def agent_start(args):
    name, o, timeout, agent_args = start_args(args)
    state = load()
    if timeout is not None and (timeout <= 3000 or timeout > 300000):
        fail("invalid_agent_timeout", "Startup timeout in milliseconds. Values must be greater than 3000 and at most 300000.")
    if not name_ok(name):
        fail("invalid_agent_name", f"agent name {stringify(name)} must match [a-z][a-z0-9_-]{{0,31}}")
    if any(has_control(x) for x in agent_args):
        fail("invalid_agent_argument", "agent arguments must not contain control characters")
    p = find(state["panes"], lambda x: g(x, "pane_id") == o["--pane"])
    if p is None:
        fail("agent_pane_not_found", f"agent target pane {o['--pane']} not found")
    created = g(p, "created_ms")
    shell_busy = now() < js_number(0 if nullish(created) else created) + env_number("HERDR_STANDIN_SHELL_BUSY_MS", 0)
    if process_of_pane(state, p) is not None or shell_busy:
        fail("agent_pane_busy", f"agent target pane {js_str(g(p, 'pane_id'))} is not an available shell")
    if any(g(a, "name") == name for a in live_agents(state)):
        fail("agent_name_taken", f"an agent named {name} is already running")
    kind = o["--kind"]
    # 0.9.2: new panes say which terminal they run in (reported, not read in its source).
    env = {**ENV, **spread(g(p, "env")), **({"TERM_PROGRAM": "herdr"} if V09 else {})}
    pane_cwd = g(p, "cwd")
    dialog = kind == "claude" and ENV.get("HERDR_STANDIN_TRUST_DIALOG") == "1" and not trusted(env, pane_cwd)
    # Claude held at its trust dialog runs nothing until the folder is trusted: the same process
    # (sh execs the agent) waits for the seat's record, as real Claude waits for the answer.
    if dialog:
        file, child_argv = "sh", ["-c", HOLD_AT_DIALOG, sys.executable, claude_json_of(env), pane_cwd, kind, *agent_args]
    else:
        file, child_argv = kind, agent_args
    try:
        pid = spawn_detached(file, child_argv, None if nullish(pane_cwd) else js_str(pane_cwd), {k: env[k] for k in _keys(env)})
    except OSError as err:
        fail("agent_start_failed", f"cannot start {kind}: spawn {file} {errno.errorcode.get(err.errno, 'UNKNOWN')}")
    ccd = env.get("CLAUDE_CONFIG_DIR", U)
    home = env.get("HOME", U)
    seat = ccd if truthy(ccd) else join(home if truthy(home) else homedir(), ".claude")
    agent = {
        "name": name,
        "kind": kind,
        "pane_id": g(p, "pane_id"),
        "pid": pid,
        "argv": [kind, *agent_args],
        "session_id": random_uuid(),
        "seat": seat,
        "project": project_folder(env, pane_cwd),
        "trustFile": claude_json_of(env),
        "cwd": pane_cwd,
        "status": "blocked" if dialog else "idle",
        "dialog": dialog,
        "composer": "",
        "seq": 1,
        "screen": [
            f"$ {' '.join([kind, *agent_args])}",
            *(QUESTION_PROSE if ENV.get("HERDR_STANDIN_QUESTION_PROSE") == "1" else []),
        ],
    }
    state["agents"] = [a for a in state["agents"] if g(a, "name") != name]
    state["agents"].append(agent)
    save(state)
    if ENV.get("HERDR_STANDIN_START_TIMEOUT") == "1":
        # Never ready: the wait runs out and the name is cleared (the agent stays in its pane).
        sleep_ms(30000 if timeout is None else timeout)
        later = load()
        mine = find(later["agents"], lambda a: g(a, "pid") == pid)
        if mine is not None:
            mine["name"] = None
        save(later)
        fail("timeout", "timed out waiting for agent startup")
    # `agent start` polls the agent until idle; `blocked` fails it at once (src/cli/agent.rs),
    # whether a dialog or only text made Herdr say so.
    if status_of(agent) == "blocked" and VERSION != "0.8.0":
        fail("agent_not_ready", f"agent {name} is blocked during startup and is not ready for prompts")
    answer({"type": "agent_started", "agent": agent_info(state, agent), "argv": [kind, *agent_args]})


def agent_send_keys(args):
    if len(args) < 2:
        usage("usage: herdr agent send-keys <target> <key> [key ...]")
    target, keys = args[0], args[1:]
    # Herdr validates every key before writing any bytes.
    for k in keys:
        if lower(k) not in KEYS:
            fail("invalid_key", f"unknown key: {k}")
    state = load()
    a = find_agent(state, target)
    if a is None:
        fail("agent_not_found", f"agent {target} not found")
    count = g(state, "sendKeys")
    state["sendKeys"] = (0 if nullish(count) else count) + 1
    # A wedged pane: Herdr reports success and the keys never reach it (#3313, #3730).
    lost = state["sendKeys"] <= env_number("HERDR_STANDIN_SEND_KEYS_NOOP", 0)
    for k in [] if lost else [lower(x) for x in keys]:
        # 2.1.328's trust dialog: the arrows move between "No, exit" and "Yes, I trust this folder".
        if (k == "down" or k == "up") and truthy(g(a, "dialog")):
            a["trustChoice"] = "yes" if k == "down" else "no"
        if k != "enter":
            continue
        style20 = ENV.get("HERDR_STANDIN_TRUST_DIALOG_STYLE") == "2.0"
        if truthy(g(a, "dialog")) and not style20 and g(a, "trustChoice") != "yes":
            # Enter on "No, exit": Claude Code ends, and with it the agent.
            stop_pid(g(a, "pid"))
            a["dialog"] = False
            a["status"] = "done"
            a["seq"] += 1
            a["screen"].append("(No, exit: Claude Code ended)")
            continue
        if truthy(g(a, "asking")):
            # "1. Yes": the command runs, the turn goes on.
            a["asking"] = False
            a["status"] = "working"
            a["seq"] += 1
        elif truthy(g(a, "dialog")):
            # "Yes": Claude records the folder as trusted and comes up idle.
            record_trust(g(a, "trustFile"), g(a, "cwd"))
            a["dialog"] = False
            a["status"] = "idle"
            a["seq"] += 1
            a["screen"].append("(trusted this folder)")
        elif truthy(g(a, "composer")):
            write_transcript(a, a["composer"])
            a["composer"] = ""
            a["status"] = "working"
            a["seq"] += 1
    save(state)
    # 0.9 answers through `send_ok_request`: nothing on stdout (0.8.2 printed the ok response).
    if V09:
        finish(0)
    answer({"type": "ok"})


def agent_wait(args):
    target = args[0] if args else None
    if target is None:
        usage("usage: herdr agent wait <target> [--until STATUS]... [--timeout MS]")
    o = options(args[1:], {"--until": "multi", "--timeout": "value"})
    for st in o.get("--until", []):
        if st not in STATUSES:
            usage(f"invalid status: {st} (expected {'|'.join(STATUSES)})")
    if "--timeout" not in o:
        violations.append("agent wait without --timeout")
    until = o["--until"] if "--until" in o else ["idle", "done", "blocked"]
    deadline = now() + (timeout_of(o["--timeout"]) if "--timeout" in o else 30000)
    while True:
        state = load()
        a = find_agent(state, target)
        if a is None:
            fail("agent_not_found", f"agent {target} not found")
        if status_of(a) in until:
            answer({"type": "agent_info", "agent": agent_info(state, a)})
        if now() >= deadline:
            fail("timeout", f"timed out waiting for agent {target}")
        sleep_ms(100)


def agent_prompt(args):
    target = args[0] if args else None
    if target is None:
        usage("usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]")
    text = args[1] if len(args) > 1 else None
    if text is None:
        usage("agent prompt requires text")
    o = options(args[2:], {"--wait": "bool", "--until": "multi", "--timeout": "value"})
    for s in o.get("--until", []):
        if s not in STATUSES:
            usage(f"invalid status: {s} (expected {'|'.join(STATUSES)})")
    if "--until" in o and not o.get("--wait"):
        usage("--until requires --wait")
    if "--timeout" in o and not o.get("--wait"):
        usage("--timeout requires --wait")
    timeout = timeout_of(o["--timeout"]) if "--timeout" in o else None
    if o.get("--wait") and timeout is None:
        violations.append("agent prompt --wait without --timeout")
    # handle_agent_prompt (src/app/api/agents.rs): only an empty text is refused.
    if text == "":
        fail("empty_agent_prompt", "agent prompt must not be empty")
    state = load()
    a = find_agent(state, target)
    if a is None:
        fail("agent_not_found", f"agent {target} not found")
    before = {"status": status_of(a), "seq": g(a, "seq")}
    if before["status"] == "blocked":
        fail("agent_blocked", f"agent {target} is blocked and requires interactive input")
    if not truthy(g(a, "name")):
        fail("agent_not_ready", f"agent {target} is not an active named agent")
    prompts = g(state, "prompts")
    state["prompts"] = (0 if nullish(prompts) else prompts) + 1
    dropped = state["prompts"] <= env_number("HERDR_STANDIN_DROP_PROMPTS", 0)
    if dropped:
        a["screen"].append("(prompt swallowed)")
        save(state)
        # Silent: Herdr saw the pane busy (with the dialog that swallowed it) and said delivered.
        if ENV.get("HERDR_STANDIN_DROP_MODE") != "stalled":
            answer({"type": "agent_prompted", "agent": agent_info(state, {**a, "status": "working"})})
        prompt_wait(o, timeout, state, a, before)
    # Text typed into the composer joins what is already there (0.9 too: #4072).
    composer = g(a, "composer")
    a["composer"] = ("" if nullish(composer) else js_str(composer)) + text
    if state["prompts"] > env_number("HERDR_STANDIN_COMPOSER", 0):
        write_transcript(a, a["composer"])
        a["composer"] = ""
        turn(a)
    # Else left unsent: nothing moves.
    save(state)
    prompt_wait(o, timeout, state, a, before)


def turn(a):
    """What Herdr's detection sees of the turn a delivered prompt starts (HERDR_STANDIN_TURN)."""
    seen = ENV.get("HERDR_STANDIN_TURN")
    if seen == "unseen":
        return
    if seen == "flicker":
        a["seq"] += 2  # idle → unknown → idle
        return
    a["seq"] += 1
    if seen == "dialog":
        a["asking"] = True
    else:
        a["status"] = "working"


def prompt_wait(o, timeout, state, a, before):
    """`prompt_agent` (src/api/wait.rs). An accepted prompt from a non-working state must take effect
    within 5 s: on 0.8 any state change counts (`all_agent_statuses`), from 0.9.0 only `working`
    or `blocked` (`prompt_activity_statuses`, PR #3506). Else `agent_prompt_stalled`, or the plain
    `timeout` when the caller's --timeout is 5 s or less. Then the settled-state wait for --until."""
    info = agent_info(state, a)
    if not o.get("--wait"):
        answer({"type": "agent_prompted", "agent": info})
    started = now()
    status = info["agent_status"]
    moved = g(a, "seq") > before["seq"]
    effect = moved and (status == "working" or status == "blocked") if V09 else moved
    if before["status"] != "working" and not effect:
        if timeout is not None and timeout <= EFFECT_MS:
            sleep_ms(js_min(timeout, EFFECT_WAIT_MS))
            fail("timeout", "timed out waiting for agent status")
        sleep_ms(EFFECT_WAIT_MS)
        fail(
            "agent_prompt_stalled",
            f"agent prompt produced no observed working or blocked state within {EFFECT_MS} ms; current status is {js_str(status)}"
            if V09
            else f"agent prompt produced no observed state change within {EFFECT_MS} ms; status is {js_str(status)} and state_change_seq remained {js_str(before['seq'])}",
        )
    until = o["--until"] if "--until" in o else ["idle", "done", "blocked"]
    if status in until:
        answer({"type": "agent_prompted", "agent": info})
    # Nothing else changes in a stand-in pane: the wait runs out.
    sleep_ms(js_max(0, (30000 if timeout is None else timeout) - (now() - started)))
    fail("timeout", "timed out waiting for agent status")


HELP = "usage: herdr <workspace|tab|pane|agent> <command> [options]"


def main():
    global request_id
    group = argv[0] if len(argv) > 0 else U
    sub = argv[1] if len(argv) > 1 else U
    rest = argv[2:]
    if group == "--version" or group == "-V":
        write_out(1, f"herdr {VERSION}\n")
        finish(0)
    fault = fault_for()
    if fault == "exit2":
        usage("stand-in: forced usage error")
    if type(fault) in (dict, list):
        request_id = f"cli:{js_str(group)}:{js_str(sub)}"
        if type(fault) is dict:
            fail(g(fault, "code"), g(fault, "message"))
        fail(U, U)
    if group == "workspace":
        workspace_command(sub, rest)
    elif group == "tab":
        tab_command(sub, rest)
    elif group == "pane":
        pane_command(sub, rest)
    elif group == "agent":
        agent_command(sub, rest)
    else:
        usage(HELP)

