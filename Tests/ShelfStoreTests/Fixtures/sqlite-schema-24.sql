-- A shelfd database at SQLite schema version 24, the last before migrations were recorded by name: what
-- `shelfd scan --provider ocr` of samples/classics.jpg and samples/europe.jpg, two books accepted, one rejected and
-- a catalogue import of 24 books left; `sqlite3 .dump`, with `user_version` (which .dump leaves out) added.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE photo (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    relative_path TEXT NOT NULL,          -- where it was first seen, under incoming/
    first_seen REAL NOT NULL
, result_node TEXT, round_id INTEGER REFERENCES shelf_round(id));
INSERT INTO photo VALUES('fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',788953,'classics.jpg',1795980426.1699013709,NULL,NULL);
INSERT INTO photo VALUES('9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',784265,'europe.jpg',1795980426.1761813164,NULL,NULL);
CREATE TABLE sighting (                   -- every path a photo has been seen at
    path TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL REFERENCES photo(sha256),
    relative_path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime REAL NOT NULL,
    seen_at REAL NOT NULL,
    sync_conflict INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sighting VALUES('/home/reader/Shelves/incoming/classics.jpg','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','classics.jpg',788953,1795894998.6855711936,1795980426.1699013709,0);
INSERT INTO sighting VALUES('/home/reader/Shelves/incoming/europe.jpg','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','europe.jpg',784265,1795894998.6855711936,1795980426.1761813164,0);
CREATE TABLE path_problem (               -- a file that could not even be read to hash it
    path TEXT PRIMARY KEY,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    size INTEGER, mtime REAL,
    at REAL NOT NULL
);
CREATE TABLE batch (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT NOT NULL,
    claimed_at REAL NOT NULL,
    finished_at REAL
);
INSERT INTO batch VALUES(1,'8383b494-59c3-4ee1-8428-7061598fcf12:25094:8548659',1795980426.1816358566,1795980438.7137627601);
CREATE TABLE job (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sha256 TEXT NOT NULL REFERENCES photo(sha256),
    provider TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending','leased','done','review','failed_retryable','dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before REAL,
    lease_owner TEXT,
    lease_expiry REAL,
    batch_id INTEGER REFERENCES batch(id),
    error_code TEXT,
    error_message TEXT,
    result_path TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    finished_at REAL
, provider_choice TEXT, awaiting TEXT, recheck_of INTEGER REFERENCES job(id), stage TEXT, stage_at REAL, queued_at REAL, provider_batch_id INTEGER REFERENCES provider_batch(id));
INSERT INTO job VALUES(1,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','ocr','review',1,NULL,NULL,NULL,1,NULL,NULL,'/home/reader/Shelves/results/classics.json',1795980426.1699013709,1795980438.7137627601,1795980438.7137627601,'ocr',NULL,NULL,'writing',1795980438.6940345764,NULL,NULL);
INSERT INTO job VALUES(2,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','ocr','review',1,NULL,NULL,NULL,1,NULL,NULL,'/home/reader/Shelves/results/europe.json',1795980426.1761813164,1795980438.7137627601,1795980438.7137627601,'ocr',NULL,NULL,'writing',1795980438.6940345764,NULL,NULL);
CREATE TABLE response (                   -- raw provider answers, saved before they are acted on
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL REFERENCES job(id),
    sha256 TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    file TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    latency_ms INTEGER,
    received_at REAL NOT NULL,
    usable INTEGER NOT NULL DEFAULT 1
, body BLOB);
INSERT INTO response VALUES(1,1,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','ocr','ppocr-v6-small','/home/reader/.local/state/shelfd/responses/fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de-1-1-ocr.json',1922,6156,1795980433.4108576774,1,NULL);
INSERT INTO response VALUES(2,2,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','ocr','ppocr-v6-small','/home/reader/.local/state/shelfd/responses/9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e-2-1-ocr.json',1762,10435,1795980438.6785981655,1,NULL);
CREATE TABLE book (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    author TEXT,
    confidence REAL NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    first_seen REAL NOT NULL,
    updated_at REAL NOT NULL
, work_key TEXT, match_source TEXT, match_key TEXT, match_score REAL, match_year INTEGER);
INSERT INTO book VALUES(1,'Pride and Prejudice Jane Austen',NULL,0.39700000000000001953,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:pride and prejudice jane austen|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(2,'Emma Jane Austen',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:emma jane austen|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(3,'Sense and Sensibility Jane Austen',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:sense and sensibility jane austen|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(4,'Charlotte Brontë',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:charlotte bronte|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(5,'Jane Eyre',NULL,0.4000000000000000222,'verified','ocr',1795980438.7137627601,1795980442.4940505028,'title:jane eyre|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(6,'Wuthering Heights Emily Brontë',NULL,0.39900000000000002131,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:wuthering heights emily bronte|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(7,'Charles Dickens',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:charles dickens|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(8,'Great Expectations',NULL,0.39600000000000001865,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:great expectations|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(9,'Middlemarch George Eliot',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:middlemarch george eliot|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(11,'Mary Shelley Frankenstein',NULL,0.39700000000000001953,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:mary shelley frankenstein|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(12,'The Picture of Dorian Gray Oscar Wilde',NULL,0.39500000000000001776,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:picture of dorian gray oscar wilde|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(13,'Crime and Punishment Fyodor Dostoevsky',NULL,0.39600000000000001865,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:crime and punishment fyodor dostoevsky|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(14,'The Brothers Karamazov',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:brothers karamazov|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(15,'Fyodor Dostoevsky',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:fyodor dostoevsky|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(16,'Anna Karenina Leo Tolstoy',NULL,0.39200000000000001509,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:anna karenina leo tolstoy|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(17,'War and Peace',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:war and peace|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(18,'The Count of Monte Cristo',NULL,0.4000000000000000222,'verified','ocr',1795980438.7137627601,1795980442.6320526599,'title:count of monte cristo|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(19,'Alexandre Dumas',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:alexandre dumas|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(20,'Madame Bovary Gustave Flaubert',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:madame bovary gustave flaubert|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(21,'Miguel de Cervantes Don Quixote',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:miguel de cervantes don quixote|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(22,'The Odyssey Homer',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:odyssey homer|',NULL,NULL,NULL,NULL);
INSERT INTO book VALUES(23,'Heart of Darkness Joseph Conrad',NULL,0.4000000000000000222,'needs_review','ocr',1795980438.7137627601,1795980438.7137627601,'title:heart of darkness joseph conrad|',NULL,NULL,NULL,NULL);
CREATE TABLE book_sighting (
    book_id INTEGER NOT NULL REFERENCES book(id),
    sha256 TEXT NOT NULL,
    box TEXT,
    confidence REAL NOT NULL,
    shelf TEXT,
    seen_at REAL NOT NULL, status TEXT NOT NULL DEFAULT 'needs_review', title TEXT, author TEXT, title_key TEXT, isbn13 TEXT, isbn10 TEXT, isbn_source TEXT, decided INTEGER NOT NULL DEFAULT 0, match_key TEXT,
    PRIMARY KEY (book_id, sha256)
);
INSERT INTO book_sighting VALUES(1,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"x2":0.0901,"y1":0.2887,"y2":0.8459,"x1":0.0502}',0.39700000000000001953,NULL,1795980438.7137627601,'needs_review','Pride and Prejudice Jane Austen',NULL,'title:pride and prejudice jane austen|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(2,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"y2":0.8389,"x2":0.1634,"y1":0.3157,"x1":0.1269}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Emma Jane Austen',NULL,'title:emma jane austen|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(3,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"x2":0.2354,"y1":0.2732,"y2":0.8363,"x1":0.2021}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Sense and Sensibility Jane Austen',NULL,'title:sense and sensibility jane austen|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(4,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"y2":0.523,"x2":0.3042,"y1":0.2545,"x1":0.2737}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Charlotte Brontë',NULL,'title:charlotte bronte|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(6,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"y2":0.8434,"x2":0.4154,"y1":0.2615,"x1":0.3723}',0.39900000000000002131,NULL,1795980438.7137627601,'needs_review','Wuthering Heights Emily Brontë',NULL,'title:wuthering heights emily bronte|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(7,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"x2":0.4754,"y1":0.2413,"y2":0.5178,"x1":0.4449}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Charles Dickens',NULL,'title:charles dickens|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(8,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"y2":0.7008,"x2":0.5177,"y1":0.2384,"x1":0.4776}',0.39600000000000001865,NULL,1795980438.7137627601,'needs_review','Great Expectations',NULL,'title:great expectations|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(9,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"x2":0.6092,"y1":0.2473,"y2":0.8386,"x1":0.5609}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Middlemarch George Eliot',NULL,'title:middlemarch george eliot|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(11,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"x2":0.782,"y1":0.3209,"y2":0.7759,"x1":0.7448}',0.39700000000000001953,NULL,1795980438.7137627601,'needs_review','Mary Shelley Frankenstein',NULL,'title:mary shelley frankenstein|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(12,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"y2":0.841,"x2":0.8639,"y1":0.2874,"x1":0.8225}',0.39500000000000001776,NULL,1795980438.7137627601,'needs_review','The Picture of Dorian Gray Oscar Wilde',NULL,'title:picture of dorian gray oscar wilde|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(13,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"x2":0.0908,"y1":0.2244,"y2":0.8284,"x1":0.0606}',0.39600000000000001865,NULL,1795980438.7137627601,'needs_review','Crime and Punishment Fyodor Dostoevsky',NULL,'title:crime and punishment fyodor dostoevsky|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(14,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"y2":0.8133,"x2":0.1903,"y1":0.2241,"x1":0.1438}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','The Brothers Karamazov',NULL,'title:brothers karamazov|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(15,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"x2":0.2357,"y1":0.4557,"y2":0.8109,"x1":0.1969}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Fyodor Dostoevsky',NULL,'title:fyodor dostoevsky|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(16,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"y2":0.8269,"x2":0.3269,"y1":0.2136,"x1":0.2828}',0.39200000000000001509,NULL,1795980438.7137627601,'needs_review','Anna Karenina Leo Tolstoy',NULL,'title:anna karenina leo tolstoy|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(17,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"x2":0.4351,"y1":0.3777,"y2":0.7902,"x1":0.3821}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','War and Peace',NULL,'title:war and peace|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(19,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"x2":0.6025,"y1":0.4745,"y2":0.8157,"x1":0.5711}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Alexandre Dumas',NULL,'title:alexandre dumas|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(20,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"y2":0.831,"x2":0.6902,"y1":0.2803,"x1":0.6439}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Madame Bovary Gustave Flaubert',NULL,'title:madame bovary gustave flaubert|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(21,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"x2":0.7864,"y1":0.2093,"y2":0.826,"x1":0.7331}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Miguel de Cervantes Don Quixote',NULL,'title:miguel de cervantes don quixote|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(22,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"y2":0.8486,"x2":0.8872,"y1":0.249,"x1":0.8245}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','The Odyssey Homer',NULL,'title:odyssey homer|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(23,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"x2":0.9486,"y1":0.3336,"y2":0.8389,"x1":0.9174}',0.4000000000000000222,NULL,1795980438.7137627601,'needs_review','Heart of Darkness Joseph Conrad',NULL,'title:heart of darkness joseph conrad|',NULL,NULL,NULL,0,NULL);
INSERT INTO book_sighting VALUES(5,'fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','{"y1":0.2493,"x1":0.3039,"x2":0.3446,"y2":0.4904}',0.4000000000000000222,NULL,1795980442.4940505028,'verified','Jane Eyre',NULL,'title:jane eyre|',NULL,NULL,NULL,1,NULL);
INSERT INTO book_sighting VALUES(18,'9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','{"y1":0.2508,"x1":0.5239,"y2":0.8173,"x2":0.5607}',0.4000000000000000222,NULL,1795980442.6320526599,'verified','The Count of Monte Cristo',NULL,'title:count of monte cristo|',NULL,NULL,NULL,1,NULL);
CREATE TABLE provider_state (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,                  -- ok | backoff | paused
    until REAL,
    code TEXT,
    message TEXT,
    updated_at REAL NOT NULL
, since REAL, probes INTEGER NOT NULL DEFAULT 0);
INSERT INTO provider_state VALUES('openlibrary','backoff',1795980463.4594464301,'source_unavailable','OpenLibrary could not be reached (connect: Could not resolve host: openlibrary.org).',1795980438.6930334567,NULL,0);
INSERT INTO provider_state VALUES('googlebooks','backoff',1795980463.4673700332,'source_unavailable','Google Books could not be reached (connect: Could not resolve host: www.googleapis.com).',1795980433.4744873047,NULL,0);
CREATE TABLE request (                    -- one row per provider request, for latency figures
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    provider TEXT NOT NULL,
    at REAL NOT NULL,
    latency_ms INTEGER NOT NULL,
    outcome TEXT NOT NULL
);
INSERT INTO request VALUES(1,'ocr',1795980433.4108576774,6156,'ok');
INSERT INTO request VALUES(2,'ocr',1795980438.6785981655,10435,'ok');
CREATE TABLE event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    sha256 TEXT,
    job_id INTEGER,
    message TEXT
);
INSERT INTO event VALUES(1,1795980426.1699013709,'queued','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',1,'classics.jpg');
INSERT INTO event VALUES(2,1795980426.1761813164,'queued','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',2,'europe.jpg');
INSERT INTO event VALUES(3,1795980433.4744873047,'provider_backoff',NULL,NULL,'openlibrary: OpenLibrary could not be reached (connect: Could not resolve host: openlibrary.org).');
INSERT INTO event VALUES(4,1795980433.4744873047,'provider_backoff',NULL,NULL,'googlebooks: Google Books could not be reached (connect: Could not resolve host: www.googleapis.com).');
INSERT INTO event VALUES(5,1795980438.7137627601,'photo_done','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',1,'12 books');
INSERT INTO event VALUES(6,1795980438.7137627601,'photo_done','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',2,'11 books');
CREATE TABLE setting (                    -- small facts that outlive a process (the last provider used)
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO setting VALUES('provider_choice_holder:8383b494-59c3-4ee1-8428-7061598fcf12:25094:8548659','ocr');
CREATE TABLE catalogue_import (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    format TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    imported INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0
);
INSERT INTO catalogue_import VALUES(1,'cat.csv','csv',1795980442.3276553153,1795980442.3376271725,24,0,0);
CREATE TABLE catalogue_entry (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    author TEXT,
    isbn13 TEXT,
    isbn10 TEXT,
    year INTEGER,
    tag TEXT,                             -- a call number printed on the spine (`796.41 Lib`)
    series TEXT,
    origin_key TEXT,                      -- the row's key in its file (an OpenLibrary /books/ or /works/ key)
    work_key TEXT NOT NULL,               -- folded title | surname
    title_folded TEXT NOT NULL,
    author_folded TEXT NOT NULL,
    tag_folded TEXT NOT NULL,
    series_folded TEXT NOT NULL,
    import_id INTEGER REFERENCES catalogue_import(id)
);
INSERT INTO catalogue_entry VALUES(1,'1984','George Orwell','9780451524935','0451524934',1949,NULL,NULL,NULL,'1984|orwell','1984','george orwell','','',1);
INSERT INTO catalogue_entry VALUES(2,'2001: A Space Odyssey','Arthur C. Clarke',NULL,NULL,1968,NULL,NULL,NULL,'2001 a space odyssey|clarke','2001 a space odyssey','arthur c clarke','','',1);
INSERT INTO catalogue_entry VALUES(3,'Absalom, Absalom!','William Faulkner',NULL,NULL,1936,NULL,NULL,NULL,'absalom absalom|faulkner','absalom absalom','william faulkner','','',1);
INSERT INTO catalogue_entry VALUES(4,'Adam Bede','George Eliot',NULL,NULL,1859,NULL,NULL,NULL,'adam bede|eliot','adam bede','george eliot','','',1);
INSERT INTO catalogue_entry VALUES(5,'Adventures of Huckleberry Finn','Mark Twain',NULL,NULL,1884,NULL,NULL,NULL,'adventures of huckleberry finn|twain','adventures of huckleberry finn','mark twain','','',1);
INSERT INTO catalogue_entry VALUES(6,'The Adventures of Tom Sawyer','Mark Twain',NULL,NULL,1876,NULL,NULL,NULL,'the adventures of tom sawyer|twain','the adventures of tom sawyer','mark twain','','',1);
INSERT INTO catalogue_entry VALUES(7,'The Aeneid','Virgil',NULL,NULL,NULL,NULL,NULL,NULL,'the aeneid|virgil','the aeneid','virgil','','',1);
INSERT INTO catalogue_entry VALUES(8,'The Age of Innocence','Edith Wharton',NULL,NULL,1920,NULL,NULL,NULL,'the age of innocence|wharton','the age of innocence','edith wharton','','',1);
INSERT INTO catalogue_entry VALUES(9,'Agnes Grey','Anne Brontë',NULL,NULL,1847,NULL,NULL,NULL,'agnes grey|bronte','agnes grey','anne bronte','','',1);
INSERT INTO catalogue_entry VALUES(10,'Alias Grace','Margaret Atwood',NULL,NULL,1996,NULL,NULL,NULL,'alias grace|atwood','alias grace','margaret atwood','','',1);
INSERT INTO catalogue_entry VALUES(11,'Alice''s Adventures in Wonderland','Lewis Carroll',NULL,NULL,1865,NULL,NULL,NULL,'alices adventures in wonderland|carroll','alices adventures in wonderland','lewis carroll','','',1);
INSERT INTO catalogue_entry VALUES(12,'All the Pretty Horses','Cormac McCarthy',NULL,NULL,1992,NULL,NULL,NULL,'all the pretty horses|mccarthy','all the pretty horses','cormac mccarthy','','',1);
INSERT INTO catalogue_entry VALUES(13,'Animal Farm','George Orwell','9780451526342','0451526341',1945,NULL,NULL,NULL,'animal farm|orwell','animal farm','george orwell','','',1);
INSERT INTO catalogue_entry VALUES(14,'Anna Karenina','Leo Tolstoy','9780143035008','0143035002',1878,NULL,NULL,NULL,'anna karenina|tolstoy','anna karenina','leo tolstoy','','',1);
INSERT INTO catalogue_entry VALUES(15,'Anne of Green Gables','L. M. Montgomery',NULL,NULL,1908,NULL,NULL,NULL,'anne of green gables|montgomery','anne of green gables','l m montgomery','','',1);
INSERT INTO catalogue_entry VALUES(16,'Ariel','Sylvia Plath',NULL,NULL,1965,NULL,NULL,NULL,'ariel|plath','ariel','sylvia plath','','',1);
INSERT INTO catalogue_entry VALUES(17,'Arrow of God','Chinua Achebe',NULL,NULL,1964,NULL,NULL,NULL,'arrow of god|achebe','arrow of god','chinua achebe','','',1);
INSERT INTO catalogue_entry VALUES(18,'As I Lay Dying','William Faulkner',NULL,NULL,1930,NULL,NULL,NULL,'as i lay dying|faulkner','as i lay dying','william faulkner','','',1);
INSERT INTO catalogue_entry VALUES(19,'Atonement','Ian McEwan',NULL,NULL,2001,NULL,NULL,NULL,'atonement|mcewan','atonement','ian mcewan','','',1);
INSERT INTO catalogue_entry VALUES(20,'The Autumn of the Patriarch','Gabriel García Márquez',NULL,NULL,1975,NULL,NULL,NULL,'the autumn of the patriarch|marquez','the autumn of the patriarch','gabriel garcia marquez','','',1);
INSERT INTO catalogue_entry VALUES(21,'Bartleby the Scrivener','Herman Melville',NULL,NULL,1853,NULL,NULL,NULL,'bartleby the scrivener|melville','bartleby the scrivener','herman melville','','',1);
INSERT INTO catalogue_entry VALUES(22,'The Beautiful and Damned','F. Scott Fitzgerald',NULL,NULL,1922,NULL,NULL,NULL,'the beautiful and damned|fitzgerald','the beautiful and damned','f scott fitzgerald','','',1);
INSERT INTO catalogue_entry VALUES(23,'The Bell','Iris Murdoch',NULL,NULL,1958,NULL,NULL,NULL,'the bell|murdoch','the bell','iris murdoch','','',1);
INSERT INTO catalogue_entry VALUES(24,'The Bell Jar','Sylvia Plath','9780060837020','0060837020',1963,NULL,NULL,NULL,'the bell jar|plath','the bell jar','sylvia plath','','',1);
CREATE TABLE catalogue_author (           -- OpenLibrary author keys, so editions and works get names
    key TEXT PRIMARY KEY,
    name TEXT NOT NULL
);
PRAGMA writable_schema=ON;
INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','catalogue_fts','catalogue_fts',0,'CREATE VIRTUAL TABLE catalogue_fts USING fts5(
    title_folded, author_folded, tag_folded, series_folded,
    content = ''catalogue_entry'', content_rowid = ''id'', tokenize = ''unicode61 remove_diacritics 2''
)');
CREATE TABLE IF NOT EXISTS 'catalogue_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
INSERT INTO catalogue_fts_data VALUES(1,X'1846330000');
INSERT INTO catalogue_fts_data VALUES(10,X'0000000002011800000001090101');
INSERT INTO catalogue_fts_data VALUES(1236950581249,X'0000041d05303139383401020201043230303102020201016102020302066273616c6f6d03040203020563686562651106010103020364616d040202030876656e74757265730502020102030502030205656e6569640702030202676508020303036e657309020202046c6961730a020204036365730b020203016c0c020202026e641602040304696d616c0d020203026e610e0202040165090601010206020202047269656c1002020303726f7711020203047468757202060101020201731202020208746f6e656d656e741302020304776f6f640a0601010302057574756d6e1402030108626172746c6562791502020208656175746966756c1602030302646504020303026c6c1702030102030205726f6e74650906010103010163020601010302066172726f6c6c0b06010103020568696e7561110601010202056c61726b65020601010402056f726d61630c06010102010664616d6e6564160205020479696e6712020501056564697468080601010202046c696f7404060101030101661606010102020361726d0d02030306756c6b6e657203060101030f060101030203696e6e0502050308747a676572616c64160601010401066761626c65730f020504047269656c140601010203047263696114060101030205656f72676501060101020306010102090601010202026f641102040204726163650a0203030365656e0f020404017909020301066865726d616e150601010202056f727365730c0205020a75636b6c6562657272790502040101691202030202616e130601010202016e0b020403076e6f63656e63650802050203726973170601010201036a617218020401086b6172656e696e610e020301016c0f06010102020261791202040202656f0e0601010203037769730b0601010201016d0f060101030207617267617265740a0601010204016b0506010102010601010204047175657a14060101040207636361727468790c0601010303046577616e13060101030207656c76696c6c65150601010302096f6e74676f6d6572790f0601010402067572646f6368170601010301076f64797373657902020502016605020301020402020407020302020303020402057277656c6c01060101030c06010103010970617472696172636814020602046c61746810060101030806010103020572657474790c020401067361777965720602060204636f747416060101030307726976656e65721502040204706163650202040205796c7669611006010102080601010201037468650602020102020102020402030804020501020301020201020201020202066f6c73746f790e0601010303016d06020502047761696e05060101030106010103010676697267696c0706010102010777686172746f6e08060101030206696c6c69616d03060101020f0601010202096f6e6465726c616e640b0205040909060c0c08130a07080908060709070b09080b060d0b0a0d0d070a0c080d0c0c0c0b090c0b080812080f0b0b0b16070908060d0a0f0609060c0a080d0807090a080e0d0b0e0b0e100d0c15110e100a0b0b0c0911210d06100d0e12');
CREATE TABLE IF NOT EXISTS 'catalogue_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
INSERT INTO catalogue_fts_idx VALUES(9,X'',2);
CREATE TABLE IF NOT EXISTS 'catalogue_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
INSERT INTO catalogue_fts_docsize VALUES(1,X'01020000');
INSERT INTO catalogue_fts_docsize VALUES(2,X'04030000');
INSERT INTO catalogue_fts_docsize VALUES(3,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(4,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(5,X'04020000');
INSERT INTO catalogue_fts_docsize VALUES(6,X'05020000');
INSERT INTO catalogue_fts_docsize VALUES(7,X'02010000');
INSERT INTO catalogue_fts_docsize VALUES(8,X'04020000');
INSERT INTO catalogue_fts_docsize VALUES(9,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(10,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(11,X'04020000');
INSERT INTO catalogue_fts_docsize VALUES(12,X'04020000');
INSERT INTO catalogue_fts_docsize VALUES(13,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(14,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(15,X'04030000');
INSERT INTO catalogue_fts_docsize VALUES(16,X'01020000');
INSERT INTO catalogue_fts_docsize VALUES(17,X'03020000');
INSERT INTO catalogue_fts_docsize VALUES(18,X'04020000');
INSERT INTO catalogue_fts_docsize VALUES(19,X'01020000');
INSERT INTO catalogue_fts_docsize VALUES(20,X'05030000');
INSERT INTO catalogue_fts_docsize VALUES(21,X'03020000');
INSERT INTO catalogue_fts_docsize VALUES(22,X'04030000');
INSERT INTO catalogue_fts_docsize VALUES(23,X'02020000');
INSERT INTO catalogue_fts_docsize VALUES(24,X'03020000');
CREATE TABLE IF NOT EXISTS 'catalogue_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO catalogue_fts_config VALUES('version',4);
INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','catalogue_vocabulary','catalogue_vocabulary',0,'CREATE VIRTUAL TABLE catalogue_vocabulary USING fts5vocab(catalogue_fts, ''row'')');
CREATE TABLE lookup_cache (
    source TEXT NOT NULL,                 -- openlibrary | googlebooks
    request TEXT NOT NULL,                -- the normalised question: "isbn:978…", "title:…|author:…", "text:…"
    records TEXT NOT NULL,                -- JSON array of CatalogueRecord; [] when nothing was found
    requested INTEGER NOT NULL,           -- how many records were asked for: a full answer may hold more
    fetched_at REAL NOT NULL,
    PRIMARY KEY (source, request)
);
CREATE TABLE book_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
    action TEXT NOT NULL,                 -- detected | matched | needs_review | reviewed_by_user
    agent TEXT NOT NULL,                  -- a provider, a source, or `user`
    at REAL NOT NULL,
    detail TEXT
);
INSERT INTO book_history VALUES(1,1,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(2,1,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(3,2,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(4,2,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(5,3,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(6,3,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(7,4,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(8,4,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(9,5,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(10,5,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(11,6,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(12,6,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(13,7,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(14,7,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(15,8,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(16,8,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(17,9,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(18,9,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(21,11,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(22,11,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(23,12,'detected','ocr',1795980438.7137627601,'classics.jpg');
INSERT INTO book_history VALUES(24,12,'needs_review','ocr',1795980438.7137627601,'classics.jpg: low_confidence');
INSERT INTO book_history VALUES(25,13,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(26,13,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(27,14,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(28,14,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(29,15,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(30,15,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(31,16,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(32,16,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(33,17,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(34,17,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(35,18,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(36,18,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(37,19,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(38,19,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(39,20,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(40,20,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(41,21,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(42,21,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(43,22,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(44,22,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(45,23,'detected','ocr',1795980438.7137627601,'europe.jpg');
INSERT INTO book_history VALUES(46,23,'needs_review','ocr',1795980438.7137627601,'europe.jpg: low_confidence');
INSERT INTO book_history VALUES(47,5,'reviewed_by_user','user',1795980442.4940505028,'accepted as read in classics.jpg');
INSERT INTO book_history VALUES(48,18,'reviewed_by_user','user',1795980442.6320526599,'accepted as read in europe.jpg');
CREATE TABLE review_item (                -- a book a person is asked about: one per photo and reading
    id TEXT PRIMARY KEY,                  -- ReviewDocument.id(photoSHA256:reading:)
    sha256 TEXT NOT NULL,
    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
    reading TEXT NOT NULL,                -- the book as read, JSON: box, candidates, reasons
    created_at REAL NOT NULL
);
INSERT INTO review_item VALUES('2f55be279f89','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',1,'{"box":{"x2":0.0901,"y1":0.2887,"y2":0.8459,"x1":0.0502},"review_reasons":["low_confidence"],"confidence":0.397,"title":"Pride and Prejudice Jane Austen","review_id":"2f55be279f89","status":"needs_review","source":"ocr","text_run":"downward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('57e11786ca82','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',2,'{"confidence":0.4,"title":"Emma Jane Austen","source":"ocr","review_id":"57e11786ca82","status":"needs_review","box":{"y2":0.8389,"x2":0.1634,"y1":0.3157,"x1":0.1269},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"downward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('a981facda233','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',3,'{"box":{"x2":0.2354,"y1":0.2732,"y2":0.8363,"x1":0.2021},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Sense and Sensibility Jane Austen","review_id":"a981facda233","status":"needs_review","source":"ocr","text_run":"downward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('ca2668084598','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',4,'{"confidence":0.4,"title":"Charlotte Brontë","source":"ocr","review_id":"ca2668084598","status":"needs_review","box":{"y2":0.523,"x2":0.3042,"y1":0.2545,"x1":0.2737},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"downward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('df201476a42e','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',6,'{"confidence":0.399,"title":"Wuthering Heights Emily Brontë","source":"ocr","review_id":"df201476a42e","status":"needs_review","box":{"y2":0.8434,"x2":0.4154,"y1":0.2615,"x1":0.3723},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"downward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('27b77123661b','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',7,'{"box":{"x2":0.4754,"y1":0.2413,"y2":0.5178,"x1":0.4449},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Charles Dickens","review_id":"27b77123661b","status":"needs_review","source":"ocr","text_run":"downward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('9aea2f606df4','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',8,'{"confidence":0.396,"title":"Great Expectations","source":"ocr","review_id":"9aea2f606df4","status":"needs_review","box":{"y2":0.7008,"x2":0.5177,"y1":0.2384,"x1":0.4776},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"downward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('ad5fa2a6b19c','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',9,'{"box":{"x2":0.6092,"y1":0.2473,"y2":0.8386,"x1":0.5609},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Middlemarch George Eliot","review_id":"ad5fa2a6b19c","status":"needs_review","source":"ocr","text_run":"downward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('9680b47484ec','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',11,'{"box":{"x2":0.782,"y1":0.3209,"y2":0.7759,"x1":0.7448},"review_reasons":["low_confidence"],"confidence":0.397,"title":"Mary Shelley Frankenstein","review_id":"9680b47484ec","status":"needs_review","source":"ocr","text_run":"downward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('942ea9027d1c','fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de',12,'{"confidence":0.395,"title":"The Picture of Dorian Gray Oscar Wilde","source":"ocr","review_id":"942ea9027d1c","status":"needs_review","box":{"y2":0.841,"x2":0.8639,"y1":0.2874,"x1":0.8225},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"downward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('ed6fa3d23750','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',13,'{"box":{"x2":0.0908,"y1":0.2244,"y2":0.8284,"x1":0.0606},"review_reasons":["low_confidence"],"confidence":0.396,"title":"Crime and Punishment Fyodor Dostoevsky","review_id":"ed6fa3d23750","status":"needs_review","source":"ocr","text_run":"upward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('a6842db34d9a','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',14,'{"confidence":0.4,"title":"The Brothers Karamazov","source":"ocr","review_id":"a6842db34d9a","status":"needs_review","box":{"y2":0.8133,"x2":0.1903,"y1":0.2241,"x1":0.1438},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"upward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('706ebf75564e','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',15,'{"box":{"x2":0.2357,"y1":0.4557,"y2":0.8109,"x1":0.1969},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Fyodor Dostoevsky","review_id":"706ebf75564e","status":"needs_review","source":"ocr","text_run":"upward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('fb24892eb72c','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',16,'{"confidence":0.392,"title":"Anna Karenina Leo Tolstoy","source":"ocr","review_id":"fb24892eb72c","status":"needs_review","box":{"y2":0.8269,"x2":0.3269,"y1":0.2136,"x1":0.2828},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"upward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('ce39d8abd8c5','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',17,'{"box":{"x2":0.4351,"y1":0.3777,"y2":0.7902,"x1":0.3821},"review_reasons":["low_confidence"],"confidence":0.4,"title":"War and Peace","review_id":"ce39d8abd8c5","status":"needs_review","source":"ocr","text_run":"upward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('e2b63bd33e87','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',19,'{"box":{"x2":0.6025,"y1":0.4745,"y2":0.8157,"x1":0.5711},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Alexandre Dumas","review_id":"e2b63bd33e87","status":"needs_review","source":"ocr","text_run":"upward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('988561b4b879','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',20,'{"confidence":0.4,"title":"Madame Bovary Gustave Flaubert","source":"ocr","review_id":"988561b4b879","status":"needs_review","box":{"y2":0.831,"x2":0.6902,"y1":0.2803,"x1":0.6439},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"upward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('c1f5b56b3b8b','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',21,'{"box":{"x2":0.7864,"y1":0.2093,"y2":0.826,"x1":0.7331},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Miguel de Cervantes Don Quixote","review_id":"c1f5b56b3b8b","status":"needs_review","source":"ocr","text_run":"upward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
INSERT INTO review_item VALUES('208c27b526e9','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',22,'{"confidence":0.4,"title":"The Odyssey Homer","source":"ocr","review_id":"208c27b526e9","status":"needs_review","box":{"y2":0.8486,"x2":0.8872,"y1":0.249,"x1":0.8245},"review_reasons":["low_confidence"],"notes":["not_enriched: no source answered"],"text_run":"downward"}',1795980438.7137627601);
INSERT INTO review_item VALUES('1f8532dc333a','9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e',23,'{"box":{"x2":0.9486,"y1":0.3336,"y2":0.8389,"x1":0.9174},"review_reasons":["low_confidence"],"confidence":0.4,"title":"Heart of Darkness Joseph Conrad","review_id":"1f8532dc333a","status":"needs_review","source":"ocr","text_run":"downward","notes":["not_enriched: no source answered"]}',1795980438.7137627601);
CREATE TABLE review_decision (            -- applied again whenever the same photo gives the same reading
    sha256 TEXT NOT NULL,
    reading_key TEXT NOT NULL,            -- the reading's normalised title + surname
    action TEXT NOT NULL CHECK (action IN ('accepted','edited','rejected')),
    book TEXT,                            -- the book as decided, JSON; NULL when rejected
    isbn_source TEXT,
    detail TEXT NOT NULL,
    decided_at REAL NOT NULL,
    PRIMARY KEY (sha256, reading_key)
);
INSERT INTO review_decision VALUES('fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','title:jane eyre|','accepted','{"box":{"y2":0.4904,"y1":0.2493,"x1":0.3039,"x2":0.3446},"source":"ocr","notes":["not_enriched: no source answered"],"status":"verified","confidence":0.4,"text_run":"downward","title":"Jane Eyre"}',NULL,'accepted as read',1795980442.4940505028);
INSERT INTO review_decision VALUES('9165bf5b936239102425f50ea05203481b651b378eaddb561bdcc94deff28e7e','title:count of monte cristo|','accepted','{"notes":["not_enriched: no source answered"],"confidence":0.4,"title":"The Count of Monte Cristo","text_run":"upward","box":{"y2":0.8173,"y1":0.2508,"x2":0.5607,"x1":0.5239},"status":"verified","source":"ocr"}',NULL,'accepted as read',1795980442.6320526599);
INSERT INTO review_decision VALUES('fa5a45898549495a118e12a7857f7c968e00d85e3516b99446a1c9a92a6f29de','title:dracula bram stoker|','rejected',NULL,NULL,'rejected',1795980442.7724423408);
CREATE TABLE request_budget (
    provider TEXT PRIMARY KEY,
    next_start REAL NOT NULL,             -- the earliest start of the next request (60 s ÷ requests_per_minute apart)
    day_ends REAL NOT NULL,               -- when the provider's day ends and day_count starts again
    day_count INTEGER NOT NULL,           -- requests sent this provider day
    day_full_until REAL                   -- set when requests_per_day was reached: the provider pauses until then
);
CREATE TABLE web_session (
    id_hash TEXT PRIMARY KEY,             -- SHA-256 of the cookie's value
    csrf TEXT NOT NULL,                   -- the token every state-changing request of the session carries
    logged_in INTEGER NOT NULL,           -- 1: by the token or a login link (valid beyond loopback); 0: loopback only
    expires_at REAL NOT NULL
);
CREATE TABLE web_login_code (
    code_hash TEXT PRIMARY KEY,           -- SHA-256 of the code in the link `shelfd web --print-login-url` printed
    expires_at REAL NOT NULL
);
CREATE TABLE provider_batch (
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    display_name TEXT NOT NULL UNIQUE,    -- how the job is found again when its name was never saved
    name TEXT,                            -- batches/{id}; NULL until the submission answered
    state TEXT NOT NULL,                  -- submitting | pending | running | succeeded | failed | cancelled | expired | unsent
    photos INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    finished_at REAL                      -- NULL while in flight
);
CREATE TABLE worker (
    owner TEXT PRIMARY KEY,               -- ProcessIdentity: boot id, pid and start time
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    version TEXT NOT NULL,
    since REAL NOT NULL,
    watch_mode TEXT,
    writes_files INTEGER NOT NULL,        -- 1: keeps results, library.json, review/ and exports current
    heartbeat REAL NOT NULL
);
CREATE TABLE photo_image (
    sha256 TEXT PRIMARY KEY REFERENCES photo(sha256),
    jpeg BLOB NOT NULL,                   -- upright, scaled for the provider, as sent
    stored_at REAL NOT NULL
);
CREATE TABLE result_document (
    job_id INTEGER PRIMARY KEY REFERENCES job(id),
    sha256 TEXT NOT NULL,
    relative_path TEXT NOT NULL,          -- the photo's path under incoming/ as ingested: the result's name
    document BLOB NOT NULL,               -- the ResultDocument's JSON, as results/ holds it
    finished_at REAL NOT NULL,
    written_at REAL                       -- NULL until a node writing files wrote it
, taken_by TEXT);
CREATE TABLE tally (
    name TEXT PRIMARY KEY,                -- a job state, pass_total or pass_finished
    n INTEGER NOT NULL,
    at REAL                               -- pass_total: when the pass began
);
INSERT INTO tally VALUES('pending',0,NULL);
INSERT INTO tally VALUES('leased',0,NULL);
INSERT INTO tally VALUES('done',0,NULL);
INSERT INTO tally VALUES('review',2,NULL);
INSERT INTO tally VALUES('failed_retryable',0,NULL);
INSERT INTO tally VALUES('dead',0,NULL);
INSERT INTO tally VALUES('pass_total',2,1795980426.1699013709);
INSERT INTO tally VALUES('pass_finished',2,1795980426.1699013709);
INSERT INTO tally VALUES('review_items',20,NULL);
CREATE TABLE shelf_round (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    shelf TEXT NOT NULL,
    opened_at REAL NOT NULL,              -- the first photo's arrival
    last_photo_at REAL NOT NULL,          -- the latest photo's arrival: quiet from then on
    ends_at REAL,                         -- set by `shelf close` or a photo arriving after the quiet time
    closed_at REAL,                       -- NULL until compared with the inventory
    photos INTEGER NOT NULL DEFAULT 0,
    books INTEGER,                        -- the inventory once closed
    unread INTEGER NOT NULL DEFAULT 0     -- photos that could not be read: nothing is called missing
);
CREATE TABLE shelf_place (
    book_id INTEGER PRIMARY KEY REFERENCES book(id) ON DELETE CASCADE,
    shelf TEXT NOT NULL,
    position INTEGER NOT NULL
);
CREATE TABLE shelf_mark (
    book_id INTEGER PRIMARY KEY REFERENCES book(id) ON DELETE CASCADE,
    shelf TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('missing', 'lent', 'gone')),
    since REAL NOT NULL,                  -- missing: the round's first photo; otherwise the answer's time
    name TEXT,                            -- lent: to whom
    round_id INTEGER REFERENCES shelf_round(id)
);
CREATE TABLE shelf_change (
    round_id INTEGER NOT NULL REFERENCES shelf_round(id),
    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('arrived', 'missing', 'moved_out')),
    other_shelf TEXT,                     -- arrived: from (NULL: new to the library); moved_out: to
    PRIMARY KEY (round_id, book_id)
);
CREATE TABLE hardcover_push (
    book_id INTEGER NOT NULL REFERENCES book(id) ON DELETE CASCADE,
    isbn13 TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('added', 'there', 'unknown')),
    hardcover_book INTEGER,
    edition INTEGER,
    user_book INTEGER,
    list TEXT,
    at REAL NOT NULL,
    PRIMARY KEY (book_id, isbn13)
);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('book_history',49);
INSERT INTO sqlite_sequence VALUES('job',2);
INSERT INTO sqlite_sequence VALUES('event',6);
INSERT INTO sqlite_sequence VALUES('batch',1);
INSERT INTO sqlite_sequence VALUES('response',2);
INSERT INTO sqlite_sequence VALUES('request',2);
INSERT INTO sqlite_sequence VALUES('book',23);
INSERT INTO sqlite_sequence VALUES('catalogue_import',1);
INSERT INTO sqlite_sequence VALUES('catalogue_entry',24);
CREATE INDEX sighting_photo ON sighting(sha256);
CREATE INDEX job_state ON job(state, not_before);
CREATE UNIQUE INDEX job_open_per_photo ON job(sha256) WHERE state IN ('pending','leased','failed_retryable');
CREATE INDEX response_job ON response(job_id, provider, model);
CREATE UNIQUE INDEX catalogue_entry_isbn ON catalogue_entry(isbn13) WHERE isbn13 IS NOT NULL;
CREATE INDEX catalogue_entry_work ON catalogue_entry(work_key);
CREATE TRIGGER catalogue_entry_added AFTER INSERT ON catalogue_entry BEGIN
    INSERT INTO catalogue_fts (rowid, title_folded, author_folded, tag_folded, series_folded)
    VALUES (new.id, new.title_folded, new.author_folded, new.tag_folded, new.series_folded);
END;
CREATE TRIGGER catalogue_entry_removed AFTER DELETE ON catalogue_entry BEGIN
    INSERT INTO catalogue_fts (catalogue_fts, rowid, title_folded, author_folded, tag_folded, series_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded, old.tag_folded, old.series_folded);
END;
CREATE TRIGGER catalogue_entry_changed AFTER UPDATE ON catalogue_entry BEGIN
    INSERT INTO catalogue_fts (catalogue_fts, rowid, title_folded, author_folded, tag_folded, series_folded)
    VALUES ('delete', old.id, old.title_folded, old.author_folded, old.tag_folded, old.series_folded);
    INSERT INTO catalogue_fts (rowid, title_folded, author_folded, tag_folded, series_folded)
    VALUES (new.id, new.title_folded, new.author_folded, new.tag_folded, new.series_folded);
END;
CREATE UNIQUE INDEX book_work ON book(work_key);
CREATE INDEX book_sighting_photo ON book_sighting(sha256);
CREATE INDEX review_item_photo ON review_item(sha256);
CREATE INDEX review_item_book ON review_item(book_id);
CREATE INDEX job_awaiting ON job(awaiting) WHERE awaiting IS NOT NULL;
CREATE INDEX job_finished ON job(finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX job_queued ON job(COALESCE(queued_at, created_at));
CREATE INDEX book_first_seen ON book(first_seen, id);
CREATE INDEX book_title_order ON book(title COLLATE NOCASE, id);
CREATE INDEX job_provider_batch ON job(provider_batch_id) WHERE provider_batch_id IS NOT NULL;
CREATE INDEX result_document_unwritten ON result_document(job_id) WHERE written_at IS NULL;
CREATE INDEX result_document_finished ON result_document(finished_at);
CREATE INDEX job_pending ON job(created_at) WHERE state = 'pending';
CREATE INDEX job_state_order ON job(state, id);
CREATE TRIGGER job_tally_added AFTER INSERT ON job BEGIN
    UPDATE tally SET n = 0, at = COALESCE(NEW.queued_at, NEW.created_at)
        WHERE name IN ('pass_total', 'pass_finished') AND NEW.state IN ('pending', 'leased', 'failed_retryable')
          AND (SELECT SUM(n) FROM tally WHERE name IN ('pending', 'leased', 'failed_retryable')) = 0;
    UPDATE tally SET n = n + 1
        WHERE name = NEW.state OR (name = 'pass_total' AND NEW.state IN ('pending', 'leased', 'failed_retryable'));
END;
CREATE TRIGGER job_tally_removed AFTER DELETE ON job BEGIN
    UPDATE tally SET n = n - 1 WHERE name = OLD.state;
END;
CREATE TRIGGER job_tally_moved AFTER UPDATE OF state ON job WHEN OLD.state <> NEW.state BEGIN
    -- Back in an empty queue: a new pass.
    UPDATE tally SET n = 0, at = COALESCE(NEW.queued_at, NEW.created_at)
        WHERE name IN ('pass_total', 'pass_finished') AND NEW.state IN ('pending', 'leased', 'failed_retryable')
          AND OLD.state IN ('done', 'review', 'dead')
          AND (SELECT SUM(n) FROM tally WHERE name IN ('pending', 'leased', 'failed_retryable')) = 0;
    -- Back in the queue, a photo this pass finished is unfinished again; any other joins the pass.
    UPDATE tally SET n = n + CASE
            WHEN name = NEW.state THEN 1
            WHEN name = OLD.state THEN -1
            WHEN OLD.state IN ('done', 'review', 'dead') AND NEW.state IN ('pending', 'leased', 'failed_retryable') THEN
                CASE WHEN COALESCE(OLD.finished_at >= (SELECT t.at FROM tally t WHERE t.name = 'pass_total'), 0) = 1
                     THEN CASE name WHEN 'pass_finished' THEN -1 ELSE 0 END
                     ELSE CASE name WHEN 'pass_total' THEN 1 ELSE 0 END END
            WHEN OLD.state IN ('pending', 'leased', 'failed_retryable') AND NEW.state IN ('done', 'review', 'dead')
                 AND name = 'pass_finished' THEN 1
            ELSE 0 END
        WHERE name IN (NEW.state, OLD.state, 'pass_total', 'pass_finished');
END
;
CREATE INDEX review_item_order ON review_item(created_at, id);
CREATE INDEX book_sighting_rank ON book_sighting(book_id, decided DESC, confidence DESC, seen_at, status);
CREATE TRIGGER review_item_tally_added AFTER INSERT ON review_item BEGIN
    UPDATE tally SET n = n + 1 WHERE name = 'review_items';
END;
CREATE TRIGGER review_item_tally_removed AFTER DELETE ON review_item BEGIN
    UPDATE tally SET n = n - 1 WHERE name = 'review_items';
END;
CREATE INDEX job_photo ON job(sha256, id);
CREATE INDEX book_sighting_title ON book_sighting(title_key, match_key, book_id);
CREATE INDEX book_sighting_isbn ON book_sighting(isbn13, book_id) WHERE isbn13 IS NOT NULL;
CREATE INDEX book_sighting_match ON book_sighting(match_key, book_id) WHERE match_key IS NOT NULL;
CREATE INDEX book_history_step ON book_history(book_id, action, agent, detail);
CREATE INDEX book_sighting_title_part ON book_sighting(substr(title_key, 1, instr(title_key, '|')));
CREATE INDEX shelf_round_open ON shelf_round(shelf, id) WHERE closed_at IS NULL;
CREATE INDEX shelf_round_shelf ON shelf_round(shelf, closed_at);
CREATE INDEX photo_round ON photo(round_id) WHERE round_id IS NOT NULL;
CREATE INDEX book_sighting_shelf ON book_sighting(shelf, book_id) WHERE shelf IS NOT NULL;
CREATE INDEX shelf_place_order ON shelf_place(shelf, position);
CREATE INDEX shelf_mark_shelf ON shelf_mark(shelf, kind);
CREATE INDEX shelf_change_book ON shelf_change(book_id);
CREATE INDEX book_updated ON book(updated_at, id);
PRAGMA writable_schema=OFF;
COMMIT;
PRAGMA user_version = 24;
