"""The monitor's HTML page (placeholder while the engine is built)."""


def render_html(monitor, path=None, *, title=None):
    raise NotImplementedError
