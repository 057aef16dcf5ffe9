"""Documents for the library's tests: a PDF made here (text pages in Helvetica, which pypdf
reads back), and folders of generated files."""

from __future__ import annotations

import zlib
from pathlib import Path


def make_pdf(path: Path, pages: list[str], *, encrypted: bool = False) -> Path:
    """A small valid PDF whose page i shows `pages[i]` (ASCII, one line)."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for index, text in enumerate(pages):
        content_ref = 5 + 2 * index
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_ref} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>".encode()
        )
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = _pdf_file(objects)
    path.write_bytes(out)
    if encrypted:
        import pypdf

        reader = pypdf.PdfReader(path)
        writer = pypdf.PdfWriter()
        for page in reader.pages:
            writer.add_page(page)
        writer.encrypt("secret")
        with path.open("wb") as file:
            writer.write(file)
    return path


def make_pdf_bomb(path: Path, pages: int = 40, stream_mb: float = 5.0) -> Path:
    """A small PDF that is costly to read (issue 38): `pages` pages sharing one content stream
    of `stream_mb` MB of text operators, compressed to a few KB. Each page makes pypdf run the
    whole stream again."""
    line = b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"
    content = line * int(stream_mb * 1_000_000 / len(line))
    packed = zlib.compress(content, 9)
    kids = " ".join(f"{5 + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream",
    ]
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 3 0 R >> >> >>"
    ] * pages
    path.write_bytes(_pdf_file(objects))
    return path


def make_pdf_memory_bomb(path: Path, image_mb: int = 70, pages: int = 3) -> Path:
    """A small PDF that is costly to hold: `pages` pages, each with its own content stream
    carrying an inline image of `image_mb` MB of zeros, compressed to a few KB each. pypdf
    inflates them in C and keeps what it inflated, so memory, not time, is what it spends: the
    default needs ~340 MB within a second of CPU (a CPU bomb reaches that only after minutes
    under a tracer). pypdf inflates at most 75 MB a stream."""
    pixels = b"\x00" * (image_mb * 1_000_000)
    content = (
        b"q BI /W 1000 /H %d /BPC 8 /CS /G ID " % (len(pixels) // 1000)
        + pixels
        + b" EI Q\nBT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"
    )
    packed = zlib.compress(content, 9)
    del pixels, content
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i in range(pages):
        objects += [
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % (5 + 2 * i),
            stream + b"\nendstream",
        ]
    path.write_bytes(_pdf_file(objects))
    return path


def _pdf_file(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; the first is the catalog), with its xref."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


TOPICS = [
    ("aardvark", "burrows"), ("basalt", "volcanoes"), ("cormorant", "fishing"),
    ("dulcimer", "strings"), ("ephemeris", "planets"), ("fjord", "glaciers"),
    ("gneiss", "metamorphic"), ("hydrofoil", "boats"), ("isotope", "neutrons"),
    ("jacquard", "looms"), ("kelp", "forests"), ("lichen", "symbiosis"),
    ("meridian", "longitude"), ("nebula", "stars"), ("obsidian", "glass"),
    ("pangolin", "scales"), ("quasar", "galaxies"), ("rhubarb", "stalks"),
    ("sextant", "navigation"), ("tundra", "permafrost"),
]  # fmt: skip


def topic_folder(root: Path, filler_words: int = 300) -> dict[str, Path]:
    """One file per topic (Markdown, text or code in turn), each about its own two words;
    returns topic -> file."""
    root.mkdir(parents=True, exist_ok=True)
    files = {}
    filler = " ".join(f"common{i % 50}" for i in range(filler_words))
    for index, (word, theme) in enumerate(TOPICS):
        if index % 3 == 0:
            path = root / f"{word}.md"
            path.write_text(f"# About the {word}\n\n{filler}\n\nThe {word} and its {theme}.\n")
        elif index % 3 == 1:
            path = root / "notes" / f"{word}.txt"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"{filler}\n\nNotes on {word}: {theme} matter.\n")
        else:
            path = root / "src" / f"{word}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f'"""{filler}"""\n\n\ndef {word}():\n    return "{theme}"\n')
        files[word] = path
    return files
