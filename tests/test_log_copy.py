"""The log pane's copy (`y`): the lines on screen, or the highlighted one, with secrets redacted."""

from __future__ import annotations

from textual.app import App, ComposeResult

from specdash.app.log import LogPane

TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield LogPane("server.log", host="h")

    def on_mount(self) -> None:
        self.query_one(LogPane).view.focus()


async def test_copy_redacts_secrets(tmp_path):
    app = PaneApp()
    async with app.run_test(size=(120, 30)) as pilot:
        pane = app.query_one(LogPane)
        pane.feed([
            "[2026-11-30 09:12:13] server_args=ServerArgs(model_path='m', api_key='s3cr3t-key', port=30000)",
            f"[2026-11-30 09:12:14] downloading with HF_TOKEN={TOKEN}",
            "[2026-11-30 09:12:15 TP0] Decode batch, #running-req: 1, #token: 108, accept len: 2.17",
        ])
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        copied = app.clipboard
        assert "#token: 108, accept len: 2.17" in copied
        assert "s3cr3t-key" not in copied and TOKEN not in copied
        assert "api_key='<redacted>'" in copied and "HF_TOKEN=<redacted>" in copied
