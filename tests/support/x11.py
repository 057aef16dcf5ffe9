"""A virtual X screen (Xvfb), xdotool on it, and asking an X11 window to close as a window
manager does when its close button is clicked.

A window manager sends the window a `WM_PROTOCOLS` client message carrying
`WM_DELETE_WINDOW` (ICCCM 4.1.2.7); the toolkit turns it into a close event the app may
refuse or defer. (`xdotool windowclose` destroys the window instead, which is not what a
user's click does.) Plain libX11 through ctypes: Xvfb needs no window manager for this.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import subprocess
from collections.abc import Iterator

CLIENT_MESSAGE = 33
NO_EVENT_MASK = 0


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("message_type", ctypes.c_ulong),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class _Event(ctypes.Union):
    # XEvent is a union padded to 24 longs.
    _fields_ = [("client", _ClientMessage), ("pad", ctypes.c_long * 24)]


def request_close(display: str, window: int) -> None:
    """Send WM_DELETE_WINDOW to `window` on `display` (e.g. ":99")."""
    path = ctypes.util.find_library("X11")
    if path is None:
        raise RuntimeError("libX11 is not installed")
    xlib = ctypes.CDLL(path)
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XInternAtom.restype = ctypes.c_ulong
    xlib.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    xlib.XSendEvent.argtypes = [
        ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.POINTER(_Event),
    ]  # fmt: skip
    xlib.XFlush.argtypes = [ctypes.c_void_p]
    xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    handle = xlib.XOpenDisplay(display.encode())
    if not handle:
        raise RuntimeError(f"cannot open X display {display}")
    try:
        event = _Event()
        event.client.type = CLIENT_MESSAGE
        event.client.send_event = 1
        event.client.display = handle
        event.client.window = window
        event.client.message_type = xlib.XInternAtom(handle, b"WM_PROTOCOLS", 0)
        event.client.format = 32
        event.client.data[0] = xlib.XInternAtom(handle, b"WM_DELETE_WINDOW", 0)
        event.client.data[1] = 0  # CurrentTime
        if not xlib.XSendEvent(handle, window, 0, NO_EVENT_MASK, ctypes.byref(event)):
            raise RuntimeError("XSendEvent failed")
        xlib.XFlush(handle)
    finally:
        xlib.XCloseDisplay(handle)


@contextlib.contextmanager
def xvfb() -> Iterator[str]:
    """A fresh Xvfb screen for the block; yields its display name (":N")."""
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    try:
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


def xdotool(display: str, *args: str) -> str:
    result = subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    return result.stdout.strip()
