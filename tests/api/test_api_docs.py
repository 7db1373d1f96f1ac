"""The interactive API docs over a real socket: served from packaged assets, nothing from a CDN."""

from __future__ import annotations

import re

import httpx
import pytest
from apikit import Api

from pyscheduler.api.app import DOCS_ASSETS

EXTERNAL = ("https://", "http://", "//cdn", "cdn.", "jsdelivr", "unpkg", "googleapis")
ASSET_TYPES = {".js": "javascript", ".css": "text/css", ".png": "image/png"}


def assets_of(client: httpx.Client, page: str) -> list[str]:
    """The page's script, stylesheet and icon URLs, after checking it names no other host."""
    r = client.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), page
    for word in EXTERNAL:
        assert word not in r.text, f"{page} refers to {word!r}: {r.text}"
    return re.findall(r'(?:src|href)="([^"]+)"', r.text)


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("/docs", {"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png"}),
        ("/redoc", {"redoc.standalone.js", "favicon.png"}),
    ],
)
def test_docs_pages_load_their_assets_from_this_server(api: Api, page: str, expected: set[str]) -> None:
    urls = assets_of(api.client, page)
    assert {u.rsplit("/", 1)[-1] for u in urls} == expected
    for url in urls:
        assert url.startswith(f"{DOCS_ASSETS}/"), url
        r = api.client.get(url)
        assert r.status_code == 200 and len(r.content) > 1000, url
        assert ASSET_TYPES[url[url.rfind(".") :]] in r.headers["content-type"], url
    if page == "/docs":
        page_text = api.client.get(page).text
        assert "url: '/openapi.json'" in page_text and '"validatorUrl": null' in page_text
        assert api.client.get("/openapi.json").json()["openapi"].startswith("3.")


def test_docs_need_no_token_and_the_api_still_does(api_with_token: Api) -> None:
    c = api_with_token.client
    for url in ["/docs", "/redoc", "/openapi.json", *assets_of(c, "/docs")]:
        assert c.get(url).status_code == 200, url
    assert c.get("/v1/decisions").status_code == 401
    assert c.get("/v1/decisions", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    assert c.get(f"{DOCS_ASSETS}/no-such-file.js").status_code == 404
