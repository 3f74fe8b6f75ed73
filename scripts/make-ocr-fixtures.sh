#!/usr/bin/env bash
# Renders the PP-OCR reader's test pictures in Tests/ShelfOCRTests/Fixtures:
#   - flat-spines.jpg: three books lying flat, their spines' titles and authors in DejaVu fonts with accents
#     (ñ, í, á, é, à), which the tests turn each way;
#   - tall-spines.jpg: twelve books standing on one shelf, each title at the spine's head and its author at the
#     foot, far apart (the band between the titles and the authors is free of text across the whole shelf), two
#     of them thin neighbours, some read downwards and some upwards.
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
PYTHONPATH="$work" python3 - "$fonts" Tests/ShelfOCRTests/Fixtures/tall-spines.jpg <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
fonts, out = sys.argv[1], sys.argv[2]
books = [  # title, author, font, spine width, height, spine colour, ink, reading ("down": head to foot, "up")
    ("Middlemarch", "George Eliot", "DejaVuSerif-Bold.ttf", 104, 840, (120, 30, 34), (240, 226, 190), "down"),
    ("The Trial", "Franz Kafka", "DejaVuSans-Bold.ttf", 92, 780, (232, 222, 200), (30, 30, 40), "down"),
    ("Persuasion", "Jane Austen", "DejaVuSerif.ttf", 98, 820, (28, 60, 96), (250, 250, 245), "up"),
    ("Siddhartha", "Hermann Hesse", "DejaVuSans.ttf", 110, 860, (214, 160, 52), (20, 20, 20), "down"),
    ("The Bell Jar", "Sylvia Plath", "DejaVuSans-Bold.ttf", 96, 800, (30, 30, 30), (235, 235, 235), "down"),
    ("Emma", "Jane Austen", "DejaVuSansCondensed-Bold.ttf", 46, 760, (70, 110, 60), (245, 240, 220), "down"),
    ("Lolita", "Vladimir Nabokov", "DejaVuSansCondensed-Bold.ttf", 46, 770, (200, 190, 170), (60, 20, 20), "down"),
    ("Rebecca", "Daphne du Maurier", "DejaVuSerif-Bold.ttf", 100, 830, (90, 40, 90), (240, 230, 250), "up"),
    ("Dune Messiah", "Frank Herbert", "DejaVuSans-Bold.ttf", 106, 850, (196, 110, 40), (20, 20, 30), "down"),
    ("Ulysses", "James Joyce", "DejaVuSerif.ttf", 94, 790, (40, 90, 110), (250, 250, 250), "down"),
    ("Cannery Row", "John Steinbeck", "DejaVuSans.ttf", 98, 810, (150, 170, 60), (20, 30, 20), "up"),
    ("Catch-22", "Joseph Heller", "DejaVuSansCondensed-Bold.ttf", 102, 845, (230, 60, 40), (255, 250, 235), "down"),
]
W, H, floor = 1400, 1000, 930
image = Image.new("RGB", (W, H), (208, 204, 196))               # the wall
draw = ImageDraw.Draw(image)
draw.rectangle((0, floor, W, H), fill=(150, 105, 65))            # the shelf's board
x = 40
for title, author, name, width, height, colour, ink, reading in books:
    top = floor - height
    draw.rectangle((x, top, x + width - 1, floor - 1), fill=colour)
    thin = width < 60
    big = ImageFont.truetype(f"{fonts}/{name}", 26 if thin else 36)
    small = ImageFont.truetype(f"{fonts}/{name}", 20 if thin else 24)
    def along(text, font, inset, at_head):
        # Drawn flat, then turned to run along the spine, centred across it.
        box = font.getbbox(text)
        flat = Image.new("RGBA", (box[2] + 8, box[3] + 8), (0, 0, 0, 0))
        ImageDraw.Draw(flat).text((4, 4), text, font=font, fill=ink)
        turned = flat.rotate(-90 if reading == "down" else 90, expand=True)
        py = top + inset if at_head else floor - inset - turned.height
        image.paste(turned, (x + (width - turned.width) // 2, py), turned)
    along(title, big, 40, True)
    along(author, small, 40, False)
    x += width + 6
image.save(out, quality=90)
PY
echo "make-ocr-fixtures: wrote Tests/ShelfOCRTests/Fixtures/flat-spines.jpg and tall-spines.jpg"
