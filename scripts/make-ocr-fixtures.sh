#!/usr/bin/env bash
# Renders the PP-OCR reader's test pictures in Tests/ShelfOCRTests/Fixtures:
#   - flat-spines.jpg: three books lying flat, their spines' titles and authors in DejaVu fonts with accents
#     (ñ, í, á, é, à), which the tests turn each way;
#   - tall-spines.jpg: twelve books standing on one shelf, each title at the spine's head and its author at the
#     foot, far apart (the band between the titles and the authors is free of text across the whole shelf), two
#     of them thin neighbours, some read downwards and some upwards;
#   - across-words.jpg: books standing on one shelf, two thick ones with their title and author set across the
#     spine word by word (small pictures between some words), one with its author's name across the head above
#     an upright title, five with upright lettering; and beside them three books lying flat in a pile, each
#     title across its own spine.
#   - small-print.jpg: twenty-four thin books standing on one shelf, titles and authors in small print along their
#     spines, as a library's shelf shows them from across the room.
#   - bookcase.jpg (with bookcase.csv, its books): a whole bookcase of three rows, its boards thin and the brown of
#     some of its books, each row's books in the columns of the rows above and below; a wide spine with its authors
#     across its head above its title and its subtitle beside the title; two thin neighbours of one colour; a
#     publisher's mark and a lone letter at the foot of every spine of the bottom row.
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
PYTHONPATH="$work" python3 - "$fonts" Tests/ShelfOCRTests/Fixtures/across-words.jpg <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
fonts, out = sys.argv[1], sys.argv[2]
W, H, floor = 1400, 1000, 930
image = Image.new("RGB", (W, H), (208, 204, 196))               # the wall
draw = ImageDraw.Draw(image)
draw.rectangle((0, floor, W, H), fill=(150, 105, 65))            # the shelf's board
def font(name, size): return ImageFont.truetype(f"{fonts}/{name}", size)
def along(text, f, x, width, py, ink, reading="down"):
    # Drawn flat, then turned to run along the spine, centred across it.
    box = f.getbbox(text)
    flat = Image.new("RGBA", (box[2] + 8, box[3] + 8), (0, 0, 0, 0))
    ImageDraw.Draw(flat).text((4, 4), text, font=f, fill=ink)
    turned = flat.rotate(-90 if reading == "down" else 90, expand=True)
    image.paste(turned, (x + (width - turned.width) // 2, py), turned)
    return turned.height
def across(text, f, centre, y, ink):
    draw.text((centre, y), text, font=f, fill=ink, anchor="mt")
x = 30
upright = [  # title, author, font, width, height, colour, ink, reading
    ("Persuasion", "Jane Austen", "DejaVuSerif.ttf", 96, 820, (28, 60, 96), (250, 250, 245), "up"),
    ("Siddhartha", "Hermann Hesse", "DejaVuSans.ttf", 100, 850, (214, 160, 52), (20, 20, 20), "down"),
]
def stand(books):
    global x
    for title, author, name, width, height, colour, ink, reading in books:
        top = floor - height
        draw.rectangle((x, top, x + width - 1, floor - 1), fill=colour)
        along(title, font(name, 36), x, width, top + 40, ink, reading)
        f = font(name, 24)
        along(author, f, x, width, floor - 40 - (f.getbbox(author)[2] + 8), ink, reading)
        x += width + 6
stand(upright)
# Two thick books, their words across the spine, one above another, small pictures between some of them.
for words, name, size, width, height, colour, ink, mark in [
    (["THE", "GRAPES", "OF", "WRATH", "JOHN", "STEINBECK"], "DejaVuSans-Bold.ttf", 30, 190, 860, (92, 200, 170), (20, 30, 30), (200, 60, 40)),
    (["A", "MOVEABLE", "FEAST", "ERNEST", "HEMINGWAY"], "DejaVuSerif-Bold.ttf", 26, 220, 840, (236, 220, 160), (90, 30, 20), (40, 80, 150)),
]:
    top = floor - height
    draw.rectangle((x, top, x + width - 1, floor - 1), fill=colour)
    centre, y = x + width // 2, top + 50
    for i, word in enumerate(words):
        across(word, font(name, size), centre, y, ink)
        y += 56
        if i % 2 == 0:                                            # a little picture, as covers print them
            draw.ellipse((centre - 26, y, centre + 26, y + 30), fill=mark)
            y += 42
    x += width + 6
# The author's name across the head, the title upright below it.
top = floor - 850
draw.rectangle((x, top, x + 110 - 1, floor - 1), fill=(40, 40, 44))
across("LEM", font("DejaVuSans-Bold.ttf", 30), x + 55, top + 30, (240, 200, 60))
along("SOLARIS", font("DejaVuSans-Bold.ttf", 44), x, 110, top + 120, (240, 240, 240))
x += 116
stand([
    ("Rebecca", "Daphne du Maurier", "DejaVuSerif-Bold.ttf", 100, 830, (90, 40, 90), (240, 230, 250), "up"),
    ("Cannery Row", "John Steinbeck", "DejaVuSans.ttf", 98, 810, (150, 170, 60), (20, 30, 20), "up"),
    ("Steppenwolf", "Hermann Hesse", "DejaVuSerif.ttf", 104, 845, (120, 30, 34), (240, 226, 190), "down"),
])
# A pile of three books lying flat, one on another, each spine's title and author across it.
y = floor
for title, author, thickness, colour, ink in [
    ("Dune", "Herbert", 78, (196, 110, 40), (20, 20, 30)),
    ("Kim", "Kipling", 70, (30, 70, 60), (240, 240, 220)),
    ("Heidi", "Spyri", 74, (232, 222, 200), (40, 30, 30)),
]:
    y -= thickness + 3
    draw.rectangle((x + 10, y, x + 280, y + thickness - 1), fill=colour)
    draw.text((x + 85, y + thickness // 2), title, font=font("DejaVuSans-Bold.ttf", 32), fill=ink, anchor="mm")
    draw.text((x + 210, y + thickness // 2), author, font=font("DejaVuSans.ttf", 24), fill=ink, anchor="mm")
image.save(out, quality=90)
PY
PYTHONPATH="$work" python3 - "$fonts" Tests/ShelfOCRTests/Fixtures/small-print.jpg <<'PY'
import sys, random
from PIL import Image, ImageDraw, ImageFont
fonts, out = sys.argv[1], sys.argv[2]
big_size, small_size = 16, 13                                  # pixels: lettering about 11 and 9 high
books = [  # title, author: thin paperbacks from samples/catalogue.csv
    ("Middlemarch", "George Eliot"), ("The Trial", "Franz Kafka"), ("Persuasion", "Jane Austen"),
    ("Siddhartha", "Hermann Hesse"), ("The Bell Jar", "Sylvia Plath"), ("Lolita", "Vladimir Nabokov"),
    ("Rebecca", "Daphne du Maurier"), ("Ulysses", "James Joyce"), ("Cannery Row", "John Steinbeck"),
    ("Catch-22", "Joseph Heller"), ("Dracula", "Bram Stoker"), ("Frankenstein", "Mary Shelley"),
    ("The Hobbit", "J. R. R. Tolkien"), ("Walden", "Henry David Thoreau"), ("Beloved", "Toni Morrison"),
    ("Moby-Dick", "Herman Melville"), ("Jane Eyre", "Charlotte Bronte"), ("Hamlet", "William Shakespeare"),
    ("The Stranger", "Albert Camus"), ("Candide", "Voltaire"), ("Dubliners", "James Joyce"),
    ("Emma", "Jane Austen"), ("Kindred", "Octavia E. Butler"), ("Solaris", "Stanislaw Lem"),
]
faces = ["DejaVuSerif-Bold.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSans.ttf", "DejaVuSansCondensed-Bold.ttf"]
colours = [((120, 30, 34), (240, 226, 190)), ((232, 222, 200), (30, 30, 40)), ((28, 60, 96), (250, 250, 245)),
           ((214, 160, 52), (20, 20, 20)), ((30, 30, 30), (235, 235, 235)), ((70, 110, 60), (245, 240, 220))]
W, H, floor = 2400, 1200, 1130
image = Image.new("RGB", (W, H), (208, 204, 196))               # the wall
draw = ImageDraw.Draw(image)
draw.rectangle((0, floor, W, H), fill=(150, 105, 65))            # the shelf's board
rnd = random.Random(7)
x = 60
for n, (title, author) in enumerate(books):
    width, height = rnd.randint(34, 44), rnd.randint(820, 900)
    colour, ink = colours[n % len(colours)]
    name = faces[n % len(faces)]
    top = floor - height
    draw.rectangle((x, top, x + width - 1, floor - 1), fill=colour)
    reading = "down" if n % 3 else "up"
    def along(text, font, inset, at_head):
        # Drawn flat, then turned to run along the spine, centred across it.
        box = font.getbbox(text)
        flat = Image.new("RGBA", (box[2] + 6, box[3] + 6), (0, 0, 0, 0))
        ImageDraw.Draw(flat).text((3, 3), text, font=font, fill=ink)
        turned = flat.rotate(-90 if reading == "down" else 90, expand=True)
        py = top + inset if at_head else floor - inset - turned.height
        image.paste(turned, (x + (width - turned.width) // 2, py), turned)
    along(title, ImageFont.truetype(f"{fonts}/{name}", big_size), 30, True)
    along(author, ImageFont.truetype(f"{fonts}/{name}", small_size), 30, False)
    x += width + 4
image.save(out, quality=90)
PY
PYTHONPATH="$work" python3 - "$fonts" Tests/ShelfOCRTests/Fixtures/bookcase.jpg <<'PY'
import sys
from PIL import Image, ImageDraw, ImageFont
fonts, out = sys.argv[1], sys.argv[2]
# A whole bookcase, three rows, photographed from the front: its boards thin and the brown of some of its books,
# the books of each row standing in the same columns as those of the rows above and below, each title at the
# spine's head and its author at the foot.
W, H = 1000, 2000
back, board = (92, 66, 44), (128, 88, 56)                          # the case's back panel and its boards
image = Image.new("RGB", (W, H), back)
draw = ImageDraw.Draw(image)
boards = [660, 1310, 1960]                                         # each row's board, 16 px thick
for y in boards:
    draw.rectangle((0, y, W, y + 15), fill=board)
draw.rectangle((0, 0, 24, H), fill=board); draw.rectangle((W - 25, 0, W, H), fill=board)
def font(name, size): return ImageFont.truetype(f"{fonts}/{name}", size)
def along(text, f, x, width, py, ink, reading="down", offset=0):
    # Drawn flat, then turned to run along the spine, centred across it (moved `offset` across).
    box = f.getbbox(text)
    flat = Image.new("RGBA", (box[2] + 8, box[3] + 8), (0, 0, 0, 0))
    ImageDraw.Draw(flat).text((4, 4), text, font=f, fill=ink)
    turned = flat.rotate(-90 if reading == "down" else 90, expand=True)
    image.paste(turned, (x + (width - turned.width) // 2 + offset, py), turned)
    return turned.height
def across(text, f, centre, y, ink):
    draw.text((centre, y), text, font=f, fill=ink, anchor="mt")
brown = (126, 86, 54)                                              # the boards' own colour, on some spines
rows = [
    [  # title, author, font, width, height, colour, ink, reading
        ("Middlemarch", "George Eliot", "DejaVuSerif-Bold.ttf", 104, 560, brown, (240, 226, 190), "down"),
        ("The Trial", "Franz Kafka", "DejaVuSans-Bold.ttf", 92, 540, (232, 222, 200), (30, 30, 40), "down"),
        None,  # the wide spine, its authors across its head
        ("Persuasion", "Jane Austen", "DejaVuSerif.ttf", 98, 550, (28, 60, 96), (250, 250, 245), "up"),
        ("Siddhartha", "Hermann Hesse", "DejaVuSans.ttf", 110, 575, brown, (245, 235, 200), "down"),
        ("Rebecca", "Daphne du Maurier", "DejaVuSerif-Bold.ttf", 100, 555, (90, 40, 90), (240, 230, 250), "up"),
        ("Cannery Row", "John Steinbeck", "DejaVuSans.ttf", 98, 545, (150, 170, 60), (20, 30, 20), "up"),
    ],
    [
        ("The Bell Jar", "Sylvia Plath", "DejaVuSans-Bold.ttf", 104, 560, (30, 30, 30), (235, 235, 235), "down"),
        ("Ulysses", "James Joyce", "DejaVuSerif.ttf", 92, 545, brown, (250, 240, 210), "down"),
        ("Emma", "Jane Austen", "DejaVuSansCondensed-Bold.ttf", 50, 530, (70, 110, 60), (245, 240, 220), "down"),
        ("Lolita", "Vladimir Nabokov", "DejaVuSansCondensed-Bold.ttf", 50, 535, (70, 110, 60), (245, 240, 220), "down"),
        ("Dune Messiah", "Frank Herbert", "DejaVuSans-Bold.ttf", 106, 570, (196, 110, 40), (20, 20, 30), "down"),
        ("Catch-22", "Joseph Heller", "DejaVuSansCondensed-Bold.ttf", 102, 565, brown, (255, 250, 235), "down"),
        ("Beloved", "Toni Morrison", "DejaVuSerif-Bold.ttf", 98, 550, (120, 30, 34), (240, 226, 190), "up"),
        ("Walden", "Henry David Thoreau", "DejaVuSerif.ttf", 98, 540, (40, 90, 110), (250, 250, 250), "down"),
    ],
    [  # each spine with a publisher's mark across its foot and a lone letter above it
        ("Dracula", "Bram Stoker", "DejaVuSerif-Bold.ttf", 104, 560, brown, (240, 226, 190), "down"),
        ("Frankenstein", "Mary Shelley", "DejaVuSans-Bold.ttf", 96, 555, (232, 222, 200), (30, 30, 40), "down"),
        ("Candide", "Voltaire", "DejaVuSerif.ttf", 150, 540, (28, 60, 96), (250, 250, 245), "up"),
        ("Moby-Dick", "Herman Melville", "DejaVuSans.ttf", 98, 575, brown, (245, 235, 200), "down"),
        ("Solaris", "Stanislaw Lem", "DejaVuSans-Bold.ttf", 110, 560, (40, 40, 44), (240, 240, 240), "down"),
        ("Kindred", "Octavia E. Butler", "DejaVuSerif-Bold.ttf", 100, 550, (90, 40, 90), (240, 230, 250), "up"),
        ("The Stranger", "Albert Camus", "DejaVuSans.ttf", 98, 545, (150, 170, 60), (20, 30, 20), "up"),
    ],
]
for row, floor in enumerate(boards):
    x = 40
    for book in rows[row]:
        if book is None:
            # Authors set across the head of a wide spine, above its title, its subtitle beside the title.
            width, height, colour, ink = 160, 580, (238, 234, 226), (40, 40, 40)
            top = floor - height
            draw.rectangle((x, top, x + width - 1, floor - 1), fill=colour)
            across("RICHARD", font("DejaVuSerif.ttf", 28), x + width // 2, top + 24, (180, 40, 40))
            across("DAWKINS", font("DejaVuSerif.ttf", 28), x + width // 2, top + 60, (180, 40, 40))
            along("The Ancestor's Tale", font("DejaVuSerif.ttf", 40), x, width, top + 130, ink, offset=18)
            along("A Pilgrimage to the Dawn of Life", font("DejaVuSerif.ttf", 22), x, width, top + 140,
                  (180, 40, 40), offset=-30)
            x += width + 4
            continue
        title, author, name, width, height, colour, ink, reading = book
        if row == 2:
            height += 60                                           # room for the marks at the foot
        top = floor - height
        draw.rectangle((x, top, x + width - 1, floor - 1), fill=colour)
        thin = width < 60
        along(title, font(name, 28 if thin else 32 if row == 2 else 36), x, width, top + 36, ink, reading)
        f = font(name, 20 if thin else 24)
        foot = 110 if row == 2 else 36
        along(author, f, x, width, floor - foot - (f.getbbox(author)[2] + 8), ink, reading)
        if row == 2:
            across("N", font("DejaVuSans-Bold.ttf", 22), x + width // 2, floor - 96, ink)
            draw.ellipse((x + width // 2 - 16, floor - 66, x + width // 2 + 16, floor - 36), fill=ink)
            across("PENGUIN", font("DejaVuSans-Bold.ttf", 11), x + width // 2, floor - 28, ink)
        x += width + 4
image.save(out, quality=90)
PY
echo "make-ocr-fixtures: wrote Tests/ShelfOCRTests/Fixtures/flat-spines.jpg, tall-spines.jpg, across-words.jpg, small-print.jpg and bookcase.jpg"
