#!/usr/bin/env bash
# Renders the sample shelf photos in samples/ and their truth files (shelfd.truth/1): book spines drawn with
# ImageMagick in several fonts, colours and sizes, text running along the spine, standing on a wooden shelf,
# with light and noise. One photo is stored sideways with an EXIF orientation tag, one is blurred. Each
# book's box in the truth file comes from the geometry drawn here, normalised to the photo as displayed.
#
#   scripts/make-samples.sh [OUTPUT_DIR]      (default: samples/)
#
# Run by developers, not CI: the photos and truth files are committed. Everything is drawn from fixed lists
# and fixed seeds, so running it again gives the same files with the same ImageMagick version.
set -euo pipefail

cd "$(dirname "$0")/.."
out="${1:-samples}"

# /usr/local/bin may hold another program called convert: use ImageMagick's own.
convert=""
for candidate in /usr/bin/magick /usr/bin/convert-im6.q16 /usr/bin/convert; do
    if [ -x "$candidate" ] && "$candidate" -version 2>/dev/null | grep -q ImageMagick; then convert="$candidate"; break; fi
done
identify="${convert/convert/identify}"
[ "$convert" = /usr/bin/magick ] && identify="/usr/bin/magick identify"
fontdir=/usr/share/fonts/truetype
missing=()
[ -n "$convert" ] || missing+=(imagemagick)
command -v exiftool >/dev/null || missing+=(libimage-exiftool-perl)
[ -f "$fontdir/dejavu/DejaVuSans.ttf" ] || missing+=(fonts-dejavu)
[ -f "$fontdir/liberation/LiberationSerif-Regular.ttf" ] || missing+=(fonts-liberation)
[ -f "$fontdir/freefont/FreeSerif.ttf" ] || missing+=(fonts-freefont-ttf)
if [ ${#missing[@]} -gt 0 ]; then
    echo "make-samples: missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi

font() {
    case "$1" in
        sans) echo "$fontdir/dejavu/DejaVuSans.ttf" ;;
        sansbold) echo "$fontdir/dejavu/DejaVuSans-Bold.ttf" ;;
        condensed) echo "$fontdir/dejavu/DejaVuSansCondensed-Bold.ttf" ;;
        serif) echo "$fontdir/dejavu/DejaVuSerif.ttf" ;;
        serifbold) echo "$fontdir/dejavu/DejaVuSerif-Bold.ttf" ;;
        libserif) echo "$fontdir/liberation/LiberationSerif-Regular.ttf" ;;
        libserifbold) echo "$fontdir/liberation/LiberationSerif-Bold.ttf" ;;
        libitalic) echo "$fontdir/liberation/LiberationSerif-Italic.ttf" ;;
        libsans) echo "$fontdir/liberation/LiberationSans-Bold.ttf" ;;
        narrow) echo "$fontdir/liberation/LiberationSansNarrow-Bold.ttf" ;;
        freeserif) echo "$fontdir/freefont/FreeSerif.ttf" ;;
        freeserifbold) echo "$fontdir/freefont/FreeSerifBold.ttf" ;;
        freesans) echo "$fontdir/freefont/FreeSansBold.ttf" ;;
        mono) echo "$fontdir/freefont/FreeMonoBold.ttf" ;;
        *) echo "make-samples: unknown font $1" >&2; exit 1 ;;
    esac
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# Canvas of every photo as displayed; books stand on the board whose top is at `floor`.
W=2800 H=1900 floor=1640 top=110

size_of() { $identify -format '%w %h\n' "$1"; }

# One spine: a strip of length L and thickness T with the text along it, then turned upright ("down": text
# reads top to bottom, English style; "up": bottom to top, continental style; "flat": lying, text level) and
# tilted by `tilt` degrees. Prints the finished image's path.
render_spine() {
    local n="$1" title="$2" author="$3" T="$4" L="$5" bg="$6" fg="$7" face="$8" layout="$9" tilt="${10}" dir="${11}"
    local f; f="$(font "$face")"
    local strip="$work/strip-$n.png" piece="$work/spine-$n.png"
    # Text areas (width along the spine × height across it); label: picks the largest size that fits.
    local tw th aw ah tx ty ax ay
    case "$layout" in
        along)       tw=$((L * 62 / 100)); th=$((T * 58 / 100)); aw=$((L * 26 / 100)); ah=$((T * 42 / 100))
                     tx=$((L * 6 / 100)); ty=$(((T - th) / 2)); ax=$((L * 70 / 100)); ay=$(((T - ah) / 2)) ;;
        authorfirst) aw=$((L * 26 / 100)); ah=$((T * 42 / 100)); tw=$((L * 60 / 100)); th=$((T * 58 / 100))
                     ax=$((L * 6 / 100)); ay=$(((T - ah) / 2)); tx=$((L * 35 / 100)); ty=$(((T - th) / 2)) ;;
        stack)       tw=$((L * 84 / 100)); th=$((T * 40 / 100)); aw=$((L * 50 / 100)); ah=$((T * 28 / 100))
                     tx=$((L * 8 / 100)); ty=$((T * 12 / 100)); ax=$((L * 8 / 100)); ay=$((T * 58 / 100)) ;;
        small)       tw=$((L * 45 / 100)); th=$((T * 32 / 100)); aw=$((L * 22 / 100)); ah=$((T * 26 / 100))
                     tx=$((L * 12 / 100)); ty=$(((T - th) / 2)); ax=$((L * 66 / 100)); ay=$(((T - ah) / 2)) ;;
        *) echo "make-samples: unknown layout $layout" >&2; exit 1 ;;
    esac
    local half=$((T / 2))
    "$convert" -size "${L}x${T}" "xc:$bg" \
        -fill "$fg" -draw "rectangle $((L * 2 / 100)),$((T / 10)) $((L * 2 / 100 + 6)),$((T - T / 10))" \
        -draw "rectangle $((L * 97 / 100 - 6)),$((T / 10)) $((L * 97 / 100)),$((T - T / 10))" \
        \( -background none -fill "$fg" -font "$f" -size "${tw}x${th}" -gravity West "label:$title" \) \
        -gravity NorthWest -geometry "+${tx}+${ty}" -composite \
        \( -background none -fill "$fg" -font "$f" -size "${aw}x${ah}" -gravity West "label:$author" \) \
        -gravity NorthWest -geometry "+${ax}+${ay}" -composite \
        \( -size "${L}x${half}" gradient:'#a8a8a8-#ffffff' \( +clone -flip \) -append -resize "${L}x${T}!" \) \
        -compose Multiply -composite -compose Over \
        "$strip"
    case "$dir" in
        down) "$convert" "$strip" -rotate 90 -background none -rotate "$tilt" "$piece" ;;
        up)   "$convert" "$strip" -rotate -90 -background none -rotate "$tilt" "$piece" ;;
        flat) "$convert" "$strip" -background none -rotate "$tilt" "$piece" ;;
    esac
    echo "$piece"
}

# Wood: stretched noise gives grain along the board; `seed` keeps it the same on every run.
wood() {
    local w="$1" h="$2" dark="$3" light="$4" seed="$5" dest="$6"
    "$convert" -size "$((w / 60 + 1))x${h}" xc:gray50 -seed "$seed" -attenuate 3 +noise Gaussian -colorspace Gray \
        -resize "${w}x${h}!" -blur 0x2 +level-colors "$dark,$light" "$dest"
}

json_escape() { local s="$1"; s="${s//\\/\\\\}"; s="${s//\"/\\\"}"; printf '%s' "$s"; }
fraction() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a / b }'; }

# make_photo NAME SEED LIGHT POST NOTES… <<< "title|author|isbn13|T|L|bg|fg|font|layout|tilt|dir" lines, left to right.
# LIGHT is the brightness at the photo's corners (percent); POST is none, blur or sideways.
make_photo() {
    local name="$1" seed="$2" light="$3" post="$4"; shift 4
    local notes=("$@")
    local back="$work/$name-back.png" board="$work/$name-board.png" lintel="$work/$name-top.png"
    wood "$W" "$H" '#24140a' '#5e3a20' "$seed" "$back"
    wood "$W" "$((H - floor))" '#6a4224' '#b07a48' "$((seed + 1))" "$board"
    wood "$W" "$top" '#5a361c' '#9a6a3c' "$((seed + 2))" "$lintel"
    local args=("$back" "$lintel" -geometry +0+0 -composite "$board" -geometry "+0+$floor" -composite)
    local books=() x=90 n=0 stack_x=0 stack_top=0
    while IFS='|' read -r title author isbn T L bg fg face layout tilt dir gap; do
        [ -n "$title" ] || continue
        n=$((n + 1))
        # The lists give thickness in a smaller unit: half as thick again fills the shelf.
        T=$((T * 3 / 2))
        local piece; piece="$(render_spine "$name-$n" "$title" "$author" "$T" "$L" "$bg" "$fg" "$face" "$layout" "$tilt" "$dir")"
        local w h y bx
        read -r w h < <(size_of "$piece")
        if [ "$dir" = flat ]; then
            # Lying books are stacked: each on the one below, shifted a little to the right.
            if [ "$stack_x" -eq 0 ]; then stack_x=$((x + ${gap:-0})); stack_top=$floor; fi
            bx=$stack_x; y=$((stack_top - h)); stack_top=$y; stack_x=$((stack_x + 14))
            x=$((bx + w))
        else
            bx=$((x + ${gap:-0})); y=$((floor - h + 2)); x=$((bx + w))
        fi
        args+=("$piece" -geometry "+$bx+$y" -composite)
        local box
        box="$(printf '{"x1": %s, "y1": %s, "x2": %s, "y2": %s}' "$(fraction "$bx" "$W")" "$(fraction "$y" "$H")" \
            "$(fraction "$((bx + w))" "$W")" "$(fraction "$((y + h))" "$H")")"
        local entry
        entry="$(printf '{"title": "%s", "author": "%s"' "$(json_escape "$title")" "$(json_escape "$author")")"
        [ -n "$isbn" ] && entry+=", \"isbn13\": \"$isbn\""
        books+=("$entry, \"box\": $box}")
    done
    if [ "$x" -gt $((W - 40)) ]; then echo "make-samples: $name is $x px wide, more than the shelf" >&2; exit 1; fi
    local flat="$work/$name.png"
    "$convert" "${args[@]}" \
        \( -size "${W}x${H}" radial-gradient:"white-gray${light}" \) -compose Multiply -composite -compose Over \
        -seed "$seed" -attenuate 0.35 +noise Gaussian "$flat"
    local photo="$out/$name.jpg"
    local save=(-strip -sampling-factor 2x2 -quality 82)
    case "$post" in
        none) "$convert" "$flat" "${save[@]}" "$photo" ;;
        blur) "$convert" "$flat" -blur 0x2.2 "${save[@]}" "$photo" ;;
        sideways)
            # Stored a quarter turn anticlockwise with Orientation 6 (turn 90° clockwise to view), like a phone
            # held sideways; the truth file's boxes stay in displayed coordinates.
            "$convert" "$flat" -rotate 270 "${save[@]}" "$photo"
            exiftool -q -overwrite_original -n -Orientation=6 "$photo"
            if ! $identify -verbose "$photo" | grep -q 'Orientation: RightTop'; then
                echo "make-samples: $photo did not keep its EXIF orientation" >&2; exit 1
            fi ;;
    esac
    {
        printf '{\n  "schema": "shelfd.truth/1",\n  "photo": "%s.jpg",\n  "books": [\n' "$name"
        local i
        for i in "${!books[@]}"; do
            printf '    %s%s\n' "${books[$i]}" "$([ "$i" -lt $((${#books[@]} - 1)) ] && echo ,)"
        done
        printf '  ],\n  "notes": ['
        for i in "${!notes[@]}"; do
            printf '%s"%s"' "$([ "$i" -gt 0 ] && echo ', ')" "$(json_escape "${notes[$i]}")"
        done
        printf ']\n}\n'
    } > "$out/$name.truth.json"
    echo "$photo: ${#books[@]} books, $(stat -c %s "$photo") bytes"
}

# title|author|isbn13|thickness|length|spine colour|text colour|font|layout|tilt°|direction|gap before (px)
make_photo classics 11 78 none "upright spines, clear light" <<'EOF'
Pride and Prejudice|Jane Austen|9780141439518|150|1150|#e8dcc0|#1d2a44|libserifbold|along|0|down|0
Emma|Jane Austen|9780141439587|120|1100|#7d1f2a|#f4e9cf|serifbold|along|0|down|4
Sense and Sensibility|Jane Austen|9780141439662|140|1180|#234b3a|#f1e6c8|libserif|along|-1|down|3
Jane Eyre|Charlotte Brontë|9780141441146|170|1250|#f2efe6|#222222|freeserifbold|stack|0|down|2
Wuthering Heights|Emily Brontë|9780141439556|130|1200|#1c1c1c|#d9b65a|serifbold|along|1|down|6
Great Expectations|Charles Dickens|9780141439563|180|1280|#3b5d8c|#ffffff|libsans|stack|0|down|0
Middlemarch|George Eliot|9780141439549|200|1230|#c8a25e|#2b1a0e|libserifbold|along|0|down|3
Dracula|Bram Stoker|9780141439846|140|1120|#8c1010|#111111|condensed|along|2|down|5
Frankenstein|Mary Shelley|9780141439471|125|1080|#d8d2c4|#3a3a3a|freeserif|authorfirst|0|down|2
The Picture of Dorian Gray|Oscar Wilde|9780141439570|135|1150|#2f2f5a|#e8e0ff|sans|along|-2|down|8
EOF

make_photo europe 23 70 none "continental spines read bottom to top" "tilted books" "one dark title on a dark spine" <<'EOF'
Crime and Punishment|Fyodor Dostoevsky|9780140449136|165|1260|#101010|#e0c070|libserifbold|along|0|up|0
The Brothers Karamazov|Fyodor Dostoevsky|9780374528379|210|1320|#f0ece0|#7a1010|serifbold|stack|-2|up|6
Anna Karenina|Leo Tolstoy|9780143035008|190|1280|#5b2a3f|#f6e7d0|freeserifbold|along|0|up|2
War and Peace|Leo Tolstoy|9781400079988|230|1330|#2b2f26|#39402f|libserifbold|stack|3|up|4
The Count of Monte Cristo|Alexandre Dumas|9780140449266|200|1280|#0f2e4f|#f5f5f5|sansbold|stack|0|up|10
Madame Bovary|Gustave Flaubert|9780143106494|130|1150|#e9c9a0|#402010|libitalic|along|-3|up|2
Don Quixote|Miguel de Cervantes|9780060934347|180|1300|#c0392b|#fdf2e0|freesans|authorfirst|0|up|14
The Odyssey|Homer|9780140268867|160|1220|#101820|#f0d890|serifbold|along|1|down|3
Heart of Darkness|Joseph Conrad|9780141441672|105|1060|#d9d9d9|#111111|narrow|along|0|down|2
EOF

make_photo america 37 74 sideways "stored sideways with EXIF orientation 6" <<'EOF'
The Great Gatsby|F. Scott Fitzgerald|9780743273565|130|1140|#0d1b3d|#f2c84b|libsans|along|0|down|0
To Kill a Mockingbird|Harper Lee|9780061120084|150|1190|#f3efe4|#1a1a1a|libserifbold|along|0|down|3
Of Mice and Men|John Steinbeck|9780140177398|105|1040|#e0b43c|#1a1a1a|sansbold|along|1|down|3
The Grapes of Wrath|John Steinbeck|9780143039433|190|1260|#6e3b1f|#f4e2c0|serifbold|stack|0|down|2
East of Eden|John Steinbeck|9780142000656|200|1270|#f4f0e8|#345a2a|freeserifbold|stack|-1|down|5
The Old Man and the Sea|Ernest Hemingway|9780684801223|110|1050|#3a8fb7|#ffffff|condensed|along|0|down|3
The Sun Also Rises|Ernest Hemingway|9780743297332|125|1140|#e8e4d8|#b03a2e|libserifbold|along|0|down|2
Moby-Dick|Herman Melville|9780142437247|210|1300|#1d3c4c|#e9e2d0|serifbold|authorfirst|2|down|4
The Catcher in the Rye|J. D. Salinger|9780316769488|130|1140|#d8412f|#fbe9a0|sansbold|along|0|down|6
Invisible Man|Ralph Ellison|9780679732761|155|1180|#121212|#e6e6e6|freesans|along|-1|down|2
Beloved|Toni Morrison|9781400033416|125|1140|#6d2440|#f0d8c8|libserif|small|0|down|3
EOF

make_photo scifi 41 72 none "two books lying flat at the right end" "small print on one spine" <<'EOF'
Dune|Frank Herbert|9780441013593|170|1230|#d9822b|#2a1405|sansbold|along|0|down|0
Foundation|Isaac Asimov|9780553293357|115|1080|#15284b|#f5d142|condensed|along|0|down|3
Neuromancer|William Gibson|9780441569595|110|1070|#0a0a0a|#3cd070|mono|along|2|down|3
The Left Hand of Darkness|Ursula K. Le Guin|9780441478125|120|1090|#e6e0d0|#222244|libserifbold|along|0|down|2
The Hitchhiker's Guide to the Galaxy|Douglas Adams|9780345391803|115|1100|#1a1a1a|#f0e000|freesans|along|-1|down|5
Fahrenheit 451|Ray Bradbury|9781451673319|110|1080|#c81e1e|#ffffff|sansbold|along|0|down|2
Brave New World|Aldous Huxley|9780060850524|130|1120|#2d6e8e|#ffffff|libsans|small|0|down|3
1984|George Orwell|9780451524935|100|1060|#f2f2f2|#c01818|sansbold|along|1|down|4
Slaughterhouse-Five|Kurt Vonnegut|9780385333849|125|1110|#222222|#e8e8e8|narrow|along|0|down|2
Catch-22|Joseph Heller|9781451626650|150|900|#f0e030|#c01010|sansbold|along|0|flat|40
The Time Machine|H. G. Wells||110|820|#3f4f3a|#f4ecd0|freeserifbold|along|0|flat|0
EOF

make_photo modern 53 76 blur "blurred, as by a shaking hand" <<'EOF'
The Road|Cormac McCarthy|9780307387899|120|1120|#1a1a1a|#e8e8e8|libserifbold|along|0|down|0
The Handmaid's Tale|Margaret Atwood|9780385490818|130|1160|#a3162a|#ffffff|libsans|along|0|down|4
One Hundred Years of Solitude|Gabriel Garcia Marquez|9780060883287|170|1260|#f2e6c9|#2a4a2a|freeserifbold|stack|-1|down|2
Things Fall Apart|Chinua Achebe|9780385474542|105|1060|#e07b1f|#1a1a1a|sansbold|along|0|down|3
The Bell Jar|Sylvia Plath|9780060837020|120|1100|#f3d1d8|#3a1a2a|serif|along|1|down|4
Lord of the Flies|William Golding|9780399501487|120|1100|#2a5a2a|#f0f0c0|condensed|along|0|down|2
Animal Farm|George Orwell|9780451526342|100|1040|#ece4d4|#2b2b2b|libserifbold|authorfirst|0|down|6
Mrs Dalloway|Virginia Woolf||115|1090|#5f7fa8|#ffffff|libitalic|along|0|down|2
Rebecca|Daphne du Maurier||140|1180|#3b1f2b|#e0c8a0|freeserifbold|along|-2|down|3
EOF

make_photo adventure 67 62 none "dim evening light" "worn cloth spines with low contrast" <<'EOF'
The Hobbit|J. R. R. Tolkien|9780547928227|150|1180|#2e4e6e|#e8d8a8|libserifbold|along|0|down|0
Treasure Island|Robert Louis Stevenson||140|1150|#8a2e1e|#f2dfb0|freeserifbold|along|0|down|3
The Call of the Wild|Jack London||110|1060|#c4b48c|#3a2e1e|sansbold|along|1|down|2
Little Women|Louisa May Alcott||160|1200|#6a3a5a|#503048|serifbold|stack|0|down|4
Alice's Adventures in Wonderland|Lewis Carroll||130|1120|#e8d8b8|#2a3a6a|libserifbold|along|-1|down|3
Adventures of Huckleberry Finn|Mark Twain||150|1200|#3e5e3a|#f0e6c0|condensed|along|0|down|6
The Secret Garden|Frances Hodgson Burnett||125|1120|#d9a441|#2b1d0e|freeserif|small|0|down|2
The Scarlet Letter|Nathaniel Hawthorne||120|1100|#7a0e14|#d8c8a8|libserif|along|2|down|3
Kidnapped|Robert Louis Stevenson||115|1060|#2a2a2a|#c8b078|freeserifbold|along|0|down|4
EOF
