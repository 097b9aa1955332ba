"""The key an entity is stored under (agent_memory_db.entities.normalize), against hostile Unicode."""

import pytest

from agent_memory_db.entities.normalize import canonical_name, normalize_entity

CYRILLIC_O = "\u043e"
GREEK_OMICRON = "\u03bf"
ZWSP, ZWJ, SOFT_HYPHEN, BOM = "\u200b", "\u200d", "\u00ad", "\ufeff"
RLO, PDF, LRI, PDI = "\u202e", "\u202c", "\u2066", "\u2069"


@pytest.mark.parametrize(
    "written",
    [
        "Postgres",
        "POSTGRES",
        "postgres",
        " postgres. ",
        "\uff50\uff4f\uff53\uff54\uff47\uff52\uff45\uff53",  # fullwidth
        f"P{CYRILLIC_O}stgres",  # a Cyrillic o in a Latin word
        f"P{GREEK_OMICRON}STGRES",  # a Greek omicron
        "\u0420\u043estgres",  # Cyrillic capital Er and small o: still mostly Latin
        f"Pos{ZWSP}tgres",
        f"Pos{ZWJ}tgres",  # a joiner inside a word is no emoji sequence
        f"Post{SOFT_HYPHEN}gres",
        f"{BOM}postgres",
        f"{RLO}postgres{PDF}",
        f"{LRI}postgres{PDI}",
        "\tpostgres\n",
        "(postgres)",
        "\u201cpostgres\u201d",  # curly quotes
        "\u300cpostgres\u300d",  # CJK corner brackets
        "postgres!?",
    ],
)
def test_one_name_written_many_ways_is_one_key(written):
    assert normalize_entity(written) == "postgres"


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("Stra\u00dfe", "strasse"),  # full case folding: sharp s is ss
        ("STRASSE", "strasse"),
        ("\u0399\u03a3\u039f\u03a3", "\u03b9\u03c3\u03bf\u03c3"),  # all Greek: folded, not made Latin
        ("\u03bf\u03b4\u03bf\u03c2", "\u03bf\u03b4\u03bf\u03c3"),  # Greek final sigma folds to sigma
        ("\ufb01le", "file"),  # the fi ligature
        ("Jos\u00e9", "jos\u00e9"),  # accents are kept
        ("Jos" + "e\u0301", "jos\u00e9"),  # e + combining acute is the composed e-acute
    ],
)
def test_case_folding_and_composition(written, key):
    assert normalize_entity(written) == key


@pytest.mark.parametrize(
    "word",
    [
        "\u041c\u043e\u0441\u043a\u0432\u0430",  # Moscow in Cyrillic
        "\u0391\u03b8\u03ae\u03bd\u03b1",  # Athens in Greek
    ],
)
def test_a_word_in_another_script_keeps_its_letters(word):
    assert normalize_entity(word) == word.casefold()


def test_an_all_cyrillic_look_alike_of_a_latin_word_is_not_rewritten():
    # "\u0441\u0430\u0445" looks like "cax" but has no Latin letter: it is taken to be Cyrillic.
    assert normalize_entity("\u0441\u0430\u0445") == "\u0441\u0430\u0445"


def test_look_alikes_are_made_latin_per_word():
    mixed = f"\u041c\u043e\u0441\u043a\u0432\u0430 P{CYRILLIC_O}stgres"
    assert normalize_entity(mixed) == "\u043c\u043e\u0441\u043a\u0432\u0430 postgres"


def test_a_word_half_latin_is_made_latin():
    assert normalize_entity("\u0440\u0430yp") == "payp"


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("\u0130stanbul", "istanbul"),  # capital I with a dot: i + combining dot, the dot dropped
        ("ISTANBUL", "istanbul"),
        ("\u0131s\u0131k", "\u0131s\u0131k"),  # the dotless i stays itself
        ("I\u015eIK", "i\u015fik"),  # and "I" folds to "i", so the dotless spelling differs
    ],
)
def test_turkish_i_is_folded_without_locale(written, key):
    assert normalize_entity(written) == key


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("error\u2013rate", "error-rate"),  # en dash
        ("error\u2014rate", "error-rate"),  # em dash
        ("error\u2212rate", "error-rate"),  # minus sign
        ("error\u2011rate", "error-rate"),  # non-breaking hyphen
        ("error\uff0drate", "error-rate"),  # fullwidth hyphen-minus
        ("error\ufe63rate", "error-rate"),  # small hyphen-minus
        ("node\u2024js", "node.js"),  # one dot leader
        ("node\u30fbjs", "node.js"),  # katakana middle dot
        ("node\uff61js", "node.js"),  # halfwidth ideographic full stop
        ("node\ufe52js", "node.js"),  # small full stop
        ("it\u2019s", "it's"),
        ("\u00abQ3 roadmap\u00bb", "q3 roadmap"),
        ("plan \u3010draft\u3011 v2", "plan [draft] v2"),
    ],
)
def test_punctuation_variants_are_ascii(written, key):
    assert normalize_entity(written) == key


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("New\u00a0\u00a0York", "new york"),  # no-break spaces
        ("New\u3000York", "new york"),  # ideographic space
        ("New \t\n York", "new york"),
        ("New\u2028York", "new york"),  # line separator
    ],
)
def test_white_space_is_one_space(written, key):
    assert normalize_entity(written) == key


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("@maria,", "@maria"),
        ("#postgres.", "#postgres"),
        ("./x.py", "./x.py"),
        ("../x.py", "../x.py"),
        ("~/.bashrc", "~/.bashrc"),
        ("/etc/nginx/nginx.conf.", "/etc/nginx/nginx.conf"),
        (".bashrc", ".bashrc"),
        ("C++.", "c++"),
        ("(C#)", "c#"),
        ("F#!", "f#"),
        ("__init__", "__init__"),
        ("'Q3 roadmap'", "q3 roadmap"),
        ("...postgres...", ".postgres"),  # a dot before a word reads as a path's
        ("[[postgres]]", "postgres"),
    ],
)
def test_edges_keep_what_handles_paths_and_languages_need(written, key):
    assert normalize_entity(written) == key


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("\U0001f418", "\U0001f418"),  # elephant
        ("\U0001f469\u200d\U0001f4bb", "\U0001f469\u200d\U0001f4bb"),  # woman + ZWJ + laptop stays one sequence
        ("\u2764\ufe0f postgres", "\u2764\ufe0f postgres"),  # heart + variation selector
        ("Postgres \U0001f680", "postgres \U0001f680"),
    ],
)
def test_emoji_are_left_alone(written, key):
    assert normalize_entity(written) == key


@pytest.mark.parametrize("written", ["", "   ", "...", "\u2014", "?!", "#", "@", "~/", "()[]{}", ZWSP + BOM, RLO])
def test_nothing_but_punctuation_or_invisibles_is_empty(written):
    assert normalize_entity(written) == ""


def test_very_long_input_is_normalized_whole():
    text = ("P" + CYRILLIC_O + "stgres  ") * 20_000
    key = normalize_entity(text)
    assert key == " ".join(["postgres"] * 20_000)


def test_normalizing_twice_changes_nothing():
    for written in ["P\u043estgres", "\u0130stanbul", "(C#)", "~/.bashrc", "Stra\u00dfe", "New\u3000York"]:
        assert normalize_entity(normalize_entity(written)) == normalize_entity(written)


@pytest.mark.parametrize(
    ("key", "canonical"),
    [
        ("postgres", "postgresql"),
        ("postgresql", "postgresql"),
        ("k8s", "kubernetes"),
        ("js", "javascript"),
        ("py", "python"),
        ("gh", "github"),
        ("maria", "maria"),
    ],
)
def test_canonical_name_resolves_aliases(key, canonical):
    assert canonical_name(key) == canonical


def test_normalize_does_not_apply_aliases():
    assert normalize_entity("k8s") == "k8s"
