"""What the sign-in page says: a wrong password with the attempts left, and a lock-out with its countdown.

Gradio's sign-in form reacts to two answers only: 400 (it shows "Incorrect Credentials") and 200 (it reloads). The
rate limit's 429 (sign_in_limit.py) left it silent: after five failures the right password only redisplayed the form,
and the wait was readable with curl alone (issue 52). `SignInPage` is ASGI middleware that adds one small script to
the page's HTML; the script watches the form's POST to `login` and writes what the answer means into the form: the
attempts left after a wrong password (the `X-Sign-In-Attempts-Left` header the rate limit sets), or "locked out:
try again in N s", counting down. It reads only the page's own answers and sends nothing.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The header the rate limit puts on a refused password: attempts left before the address or account is locked out.
ATTEMPTS_LEFT = "X-Sign-In-Attempts-Left"
STATUS_ID = "rs-sign-in-status"

SCRIPT = f"""<script>
(() => {{
  const original = window.fetch.bind(window);
  const place = (text) => {{
    let box = document.getElementById('{STATUS_ID}');
    if (!box) {{
      box = document.createElement('div');
      box.id = '{STATUS_ID}';
      box.setAttribute('role', 'alert');
      box.style.cssText = 'margin:8px 0;padding:8px 12px;border-radius:8px;background:#fdecec;color:#7a1a1a;' +
        'border:1px solid #f2b3b3;font-size:0.95rem';
      const button = document.querySelector('button');
      (button ? button.parentElement : document.body).insertBefore(box, button);
    }}
    box.textContent = text;
  }};
  let timer = null;
  const lockedOut = (seconds) => {{
    clearInterval(timer);
    let left = seconds;
    const say = () => place(left > 0
      ? `Too many failed sign-ins: locked out. Try again in ${{left}} s.`
      : 'You can sign in again now.');
    say();
    timer = setInterval(() => {{ left -= 1; say(); if (left <= 0) {{ clearInterval(timer); }} }}, 1000);
  }};
  window.fetch = async (target, options) => {{
    const response = await original(target, options);
    const url = typeof target === 'string' ? target : (target && target.url) || String(target);
    if (!options || options.method !== 'POST' || !/\\/login\\/?$/.test(url)) {{ return response; }}
    if (response.status === 429) {{
      lockedOut(Number(response.headers.get('Retry-After') || '0'));
    }} else if (response.status === 400) {{
      clearInterval(timer);
      const left = response.headers.get('{ATTEMPTS_LEFT}');
      place('Wrong user name or password.' + (left === null ? '' :
        ` ${{left}} attempt(s) left before sign-in is locked for a while.`));
    }}
    return response;
  }};
}})();
</script>"""


class SignInPage:
    """ASGI middleware: the script above goes into every HTML page the app serves (GET, 200, text/html), before
    `</head>`; anything else passes untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []  # the response start of an HTML page, then its body parts

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                if message["status"] == 200 and _is_plain_html(message):
                    held.append(message)
                    return
            elif held:
                held.append(message)
                if not message.get("more_body"):
                    await _send_with_script(held, send)
                return
            await send(message)

        await self.app(scope, receive, watched)


def _is_plain_html(start: Message) -> bool:
    """An HTML answer that is not compressed (a compressed one is passed on as it is)."""
    headers = {name.lower(): value for name, value in start.get("headers", [])}
    return headers.get(b"content-type", b"").startswith(b"text/html") and b"content-encoding" not in headers


async def _send_with_script(held: list[Message], send: Send) -> None:
    """The held page with the script in its head, and its length corrected."""
    start, parts = held[0], held[1:]
    page = b"".join(part.get("body", b"") for part in parts).replace(b"</head>", SCRIPT.encode() + b"</head>", 1)
    headers = [(name, value) for name, value in start.get("headers", []) if name.lower() != b"content-length"]
    await send({**start, "headers": [*headers, (b"content-length", str(len(page)).encode())]})
    await send({"type": "http.response.body", "body": page, "more_body": False})
