#!/usr/bin/env bash
# Renders Tests/ShelfOCRTests/Fixtures/flat-spines.jpg: three books lying flat, their spines' titles and
# authors in DejaVu fonts with accents (ñ, í, á, é, à), for the PP-OCR reader's tests, which turn it each way.
# Run by developers, not CI: the picture is committed. Pillow is installed into a temporary folder for the
# drawing only; shelfd itself runs no Python.
set -euo pipefail
cd "$(dirname "$0")/.."
fonts=/usr/share/fonts/truetype/dejavu
[ -f "$fonts/DejaVuSerif-Bold.ttf" ] || { echo "make-ocr-fixtures: install fonts-dejavu-core" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip install --quiet --target "$work" pillow==13.0.0
PYTHONPATH="$work" python3 - "$fonts" Tests/ShelfOCRTests/Fixtures/flat-spines.jpg <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
fonts, out = sys.argv[1], sys.argv[2]
books = [  # title, author, font, spine colour, ink
    ("Cien años de soledad", "Gabriel García Márquez", "DejaVuSerif-Bold.ttf", (122, 38, 30), (240, 226, 190)),
    ("Les Misérables", "Victor Hugo", "DejaVuSans-Bold.ttf", (232, 222, 200), (30, 30, 40)),
    ("Le città invisibili", "Italo Calvino", "DejaVuSerif.ttf", (28, 60, 96), (250, 250, 245)),
]
image = Image.new("RGB", (960, 400), (170, 130, 90))           # the shelf's wood
draw = ImageDraw.Draw(image)
y = 40
for title, author, name, colour, ink in books:
    draw.rectangle((40, y, 920, y + 96), fill=colour)
    big, small = ImageFont.truetype(f"{fonts}/{name}", 40), ImageFont.truetype(f"{fonts}/{name}", 26)
    draw.text((70, y + 26), title, font=big, fill=ink)
    draw.text((900, y + 38), author, font=small, fill=ink, anchor="ra")
    y += 112
image.save(out, quality=90)
PY
echo "make-ocr-fixtures: wrote Tests/ShelfOCRTests/Fixtures/flat-spines.jpg"
