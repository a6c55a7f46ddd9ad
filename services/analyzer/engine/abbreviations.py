"""Common abbreviations of words that appear in identifiers.

Neither form is "right": a repository that writes ``msg`` everywhere wants ``msg``. The table only
says which spellings are variants of one term; the repository's own counts pick the preferred one.
Words whose short form is the universal spelling (``id``, ``args``) or a builtin of a language
(``str``, ``dict``, ``len``, ``max``, ``iter``, ``exec``, ``del``) are left out on purpose: code
says ``str`` because the type is called that, not for lack of a preferred term.
"""

from __future__ import annotations

import builtins
import keyword

ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "address": ("addr",),
    "allocate": ("alloc",),
    "application": ("app",),
    "argument": ("arg",),
    "attribute": ("attr",),
    "authentication": ("authn",),
    "authorization": ("authz",),
    "average": ("avg",),
    "buffer": ("buf", "buff"),
    "button": ("btn",),
    "calculate": ("calc",),
    "callback": ("cb",),
    "certificate": ("cert",),
    "character": ("char", "chr"),
    "column": ("col",),
    "command": ("cmd",),
    "compare": ("cmp",),
    "configuration": ("config", "cfg", "conf"),
    "config": ("cfg", "conf"),
    "connection": ("conn",),
    "context": ("ctx",),
    "count": ("cnt",),
    "current": ("cur", "curr"),
    "database": ("db",),
    "decrement": ("dec",),
    "default": ("dflt",),
    "definition": ("defn",),
    "description": ("desc",),
    "destination": ("dest", "dst"),
    "difference": ("diff",),
    "directory": ("dir",),
    "document": ("doc",),
    "element": ("elem", "el"),
    "environment": ("env",),
    "error": ("err",),
    "event": ("evt",),
    "exception": ("exc",),
    "expression": ("expr",),
    "extension": ("ext",),
    "filename": ("fname", "fn"),
    "format": ("fmt",),
    "frequency": ("freq",),
    "function": ("func", "fn"),
    "generate": ("gen",),
    "header": ("hdr",),
    "height": ("hgt",),
    "identifier": ("ident",),
    "image": ("img",),
    "increment": ("inc", "incr"),
    "index": ("idx", "ndx"),
    "information": ("info",),
    "initialize": ("init",),
    "language": ("lang",),
    "library": ("lib",),
    "location": ("loc",),
    "manager": ("mgr",),
    "memory": ("mem",),
    "message": ("msg", "mesg"),
    "module": ("mod",),
    "number": ("num", "nr"),
    "object": ("obj",),
    "operation": ("op",),
    "original": ("orig",),  # never `origin`, though a repository writing both reads it so
    "package": ("pkg",),
    "parameter": ("param",),
    "password": ("passwd", "pwd"),
    "pointer": ("ptr",),
    "position": ("pos",),
    "previous": ("prev",),
    "properties": ("props",),
    "property": ("prop",),
    "quantity": ("qty",),
    "query": ("qry",),
    "receive": ("recv",),
    "reference": ("ref",),
    "register": ("reg",),
    "repository": ("repo",),
    "request": ("req",),
    "response": ("resp", "res"),
    "result": ("res",),
    "return": ("ret",),
    "sequence": ("seq",),
    "server": ("srv",),
    "source": ("src",),
    "specification": ("spec",),
    "statement": ("stmt",),
    "synchronize": ("sync",),
    "table": ("tbl",),
    "template": ("tmpl", "tpl"),
    "temporary": ("tmp", "temp"),
    "text": ("txt",),
    "timestamp": ("ts",),
    "user": ("usr",),
    "utility": ("util",),
    "value": ("val",),
    "variable": ("var",),
    "version": ("ver",),
    "window": ("win", "wnd"),
}

# abbreviation -> the words it abbreviates
EXPANSIONS: dict[str, tuple[str, ...]] = {}
for _word, _abbrevs in ABBREVIATIONS.items():
    for _a in _abbrevs:
        EXPANSIONS[_a] = (*EXPANSIONS.get(_a, ()), _word)

_VOWELS = frozenset("aeiou")


def skeleton(word: str) -> str:
    """First letter plus the remaining consonants, doubled letters collapsed: user -> usr."""
    out = [word[0]]
    for c in word[1:]:
        if c not in _VOWELS and c != out[-1]:
            out.append(c)
    return "".join(out)


# Short forms the derived rules below must never read as abbreviations: ordinary English words
# (``form`` is not ``format``, ``cat`` is not ``category``), the universal and builtin spellings
# the table leaves out on purpose (``args``, ``str``), and acronyms that are words of their own in
# code (``sql`` is not ``sequential``).
_COMMON = """
    act add age ago aid aim air all and ant any ape apt arc are arm art ash ask ate awe axe bad bag
    ban bar bat bay bed bee bet bid big bin bit bob bog bow box boy bud bug bun bus but buy bye cab
    can cap car cat cow cry cub cue cup cut dad dam day den dew did die dig dim dip doe dog don dot
    dry due dug dye ear eat egg ego elf end era eve eye fan far fat fax fed fee few fig fin fit fix
    fly foe fog for fox fry fun fur gap gas gel gem get god got gum gun gut guy gym had ham has hat
    hay hen her hex hid him hip his hit hog hop hot how hub hue hug hut ice icy ill imp ink inn ion
    its jam jar jaw jet job jog joy jug key kid kin kit lab lad lag law lay led leg let lid lie lip
    lit log lot low mad man map mat may men met mid mix mob mod mop mud mug nap nay net new nil nod
    nor not now nut oak oar odd off oil old one orb ore our out owe owl own pad pal pan par pat
    paw pay pea peg pen per pet pie pig pin pit ply pod pop pot pro pry pub pun pup put rag ram ran
    rap rat raw ray red rib rid rig rim rip rob rod rot row rub rug rum run rut sad sag sat saw say
    sea see set sew she shy sin sip sir sit six ski sky sly sob son sow soy spa spy sub sue sum sun
    tab tag tan tap tar tax tea ten the tie tin tip toe ton too top tot tow toy try tub tug two use
    van vat vet via vow war was wax way web wed wet who why wig win wit woe won wow yes yet you zip
    able also area back bank base bear beat been bell belt bend best bill bind bird bite blow blue
    body bold bolt bond bone book boot born boss both bulk burn busy cake call calm came camp card
    care case cash cast cell chat chip city clip club coal coat code coin cold come cone cook cool
    copy core cost crop cube dark dash data date dead deal dear deep deny desk diet dirt disk dive
    done door dose down draw drop drum dual dump dust duty each earn ease east easy edge else emit
    even ever exit face fact fail fair fall fame farm fast fate fear feed feel file fill film find
    fine fire firm fish flag flat flip flow fold folk font food foot form fork four free from fuel
    full fund gain game gate gave gear gift girl give glad glow glue goal goes gold golf gone good
    grab gray grid grow half hall halt hand hang hard harm hash have head heap hear heat held hell
    help here hero hide high hint hold hole home hook hope host hour huge hunt idea inch into iron
    item join jump just keen keep kept kill kind king knew know lack lady laid lake land lane last
    late lazy lead leaf lean left lend less life lift like limb line link list live load loan lock
    long look loop lord lose loss lost loud love luck made mail main make male many mark mask mass
    meal mean meet melt memo menu mere mesh mild mile milk mind mine miss mode mood moon more most
    move much must name near neat need news next nice node none noon norm nose note noun okay once
    only open over pace pack page paid pain pair pale palm park part pass past path peak peek peer
    pick pile pine pink pipe plan play plot plug plus poll pond pool poor port pose post pour pull
    pure push quit race rack rage rain rank rare rate read real rely rent rest rich ride ring rise
    risk road rock role roll roof room root rope rose rule rush safe said sake sale salt same sand
    save scan seal seat seed seek seem seen self sell send sent ship shop shot show shut sick side
    sign sing sink site size skip slip slot slow snap soft soil sold sole some song soon sort soul
    span spin spot star stay stem step stop such suit sure swap tail take tale talk tall tank tape
    task team tear tell tend term test than that them then they thin this thus tick tide tidy tile
    till time tiny tone took tool tour town trap tree trim trip true tune turn twin type unit upon
    used user vary vast verb very view vote wait wake walk wall want warm warn wash wave weak wear
    week well went were west what when whom wide wife wild will wind wine wing wipe wire wise wish
    with wood word wore work wrap yard year zero zone
    about above after again agent alarm alert alias align alike alive allow alone along alter angle
    apply argue arise aside asset avoid award aware badge basic basis batch begin being below bench
    birth black blank blend block board bound brand bread break brief bring broad build built bunch
    cable carry catch cause chain chair chart cheap check chief child chunk civil claim class clean
    clear click clock close cloud coach count court cover crash cross crowd death delay depth digit
    dirty doubt draft drain drive early earth empty enter entry equal event every exact extra fault
    field final first fixed flash fleet float flush focus force frame fresh front fruit funny given
    glass globe grant graph great green group guard guess guest guide happy heavy hence hover human
    ideal image index inner input issue joint judge known label large later layer learn least leave
    legal level light limit local logic loose lower lucky magic major maker march match maybe media
    merge metal minor mixed model money month mount mouse mouth moved movie music naive nerve never
    night noise north novel occur offer often order other outer owner panel paper party patch pause
    phase phone photo piece pilot pitch place plain plane plant plate point power press price pride
    prime print prior proof proud prove queue quick quiet quite quote radio raise range rapid ratio
    reach ready refer relax reply right rigid rival river rough round route royal rural scale scene
    scope score sense serve setup seven shade shall shape share sharp sheet shell shift short shown
    sight since skill sleep slice small smart smile solid solve sound south space spare speak speed
    spend spent split sport staff stage stake stand start state steal steel stick still stock stone
    store storm story strip stuck study stuff style sugar super sweet swing table taken taste teach
    thank theme there these thick thing think third those three throw tight title today token topic
    total touch tough tower trace track trade trail train treat trend trial tried truck truly trust
    truth twice under union until upper upset urban usage usual valid value video visit vital voice
    waste watch water wheel where which while white whole whose woman world worry worth would write
    wrong yield young
    args kwargs str int dict len max min iter exec del repr bool bytes tuple chr ord abs cls mkdir
    api ast cpu gpu csv pdf png jpg gif svg xml sql url uri uuid utf ascii http https ftp ssh ssl
    tls tcp udp dns jwt rpc ipc tty pty dom css html json yaml toml gzip zlib crc md5 sha nan inf
    std stdin stdout stderr glob alt ansi ecma mime smtp imap pop3 ldap ntp vm os io ui ux db
"""
# Short forms with a reading of their own in code, or more than one: ``cls`` is Python's name for
# the class (not ``close``), ``ops`` operations (not ``options``), ``prs`` pull requests or pairs
# (not ``parse``), ``itms`` a URL scheme (``itms-services``), not ``items``; ``ttl`` is time to
# live (not ``total``), ``rec`` a recursion or record.
_READINGS = "cls ops prs itms mcs obj impl ttl rec"
COMMON_WORDS: frozenset[str] = frozenset(_COMMON.split()) | frozenset(_READINGS.split())

_TRANS = "trans"  # spelled ``x`` in short forms: txn, xfer, xform


def plural(word: str) -> str:
    """The regular English plural: value -> values, property -> properties, box -> boxes."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in _VOWELS:
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def spellings(word: str) -> tuple[str, ...]:
    """The word, plus the forms short forms are cut from (``trans`` written ``x``/``tx``)."""
    if word.startswith(_TRANS) and len(word) > len(_TRANS) + 1:
        rest = word[len(_TRANS) :]
        return (word, "tx" + rest, "x" + rest)
    return (word,)


def _subsequence(short: str, word: str) -> bool:
    it = iter(word)
    return all(c in it for c in short)


# Endings that make a word of a word (inspect-or, initial-ly, environ-ment, collect-ion): a short
# form that a repository word extends by one of them is that word's stem, a word of its own.
_SUFFIXES = """
    s es ed er or ly al ic ing ers ors ion ions ment ments ness able ible ive ity ize ise ist ism ful less
    ous ance ence ant ent ure age ery ary ory ish ical ation ations
"""
SUFFIXES: frozenset[str] = frozenset(_SUFFIXES.split())


def prefix_of(short: str, word: str) -> bool:
    """``short`` cuts ``word`` after a consonant, keeping three letters and dropping two: ``tok``."""
    return 3 <= len(short) <= len(word) - 2 and word.startswith(short) and short[-1] not in _VOWELS


# A stem this short cut before an ending this long is how short forms are made (sess-ion,
# inst-ance, hist-ory), not a word of its own as inspect-or and lint-er are.
_SHORT_STEM, _LONG_ENDING = 4, 3


def stem_of(short: str, word: str) -> bool:
    """``word`` is ``short`` plus a suffix (inspect-or, lint-er): ``short`` is a word itself."""
    rest = word[len(short) :]
    if not (word.startswith(short) and rest in SUFFIXES):
        return False
    return len(short) > _SHORT_STEM or len(rest) < _LONG_ENDING


def drops_letters(short: str, word: str) -> bool:
    """``short`` is ``word`` with letters dropped: ``tgt`` (target), ``hdl`` (handle).

    It keeps the word's first letter and no vowel after it, at least a third of the word's
    letters, and the word's last consonant or more than half of its (at least five) consonants:
    ``tpl`` for template, but not ``fns`` for finish.
    """
    n = len(short)
    if n < 3 or 3 * n < len(word) or n > len(word) - 2 or short[0] != word[0]:
        return False
    if any(c in _VOWELS for c in short[1:]) or not _subsequence(short, word):
        return False
    consonants = [c for c in word if c not in _VOWELS]
    if short[-1] == consonants[-1]:
        return True
    sk = skeleton(word)
    return len(sk) >= 5 and 2 * n > len(sk)


# Names a rename must not produce: a language's keywords and the builtins a name would shadow.
# Short forms are often chosen to avoid exactly these (``fmt`` for format, ``rng`` for range,
# ``ret`` for return), so such a short form is no deviation.
_JS_RESERVED = """
    break case catch class const continue debugger default delete do else export extends finally for
    function if import in instanceof new return super switch this throw try typeof var void while with
    yield let static enum await implements package protected interface private public null true false
    undefined arguments eval Array Object String Number Boolean Symbol Map Set Promise Error JSON Math
    Date RegExp console
"""
RESERVED: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)),
    "javascript": frozenset(_JS_RESERVED.split()),
    "typescript": frozenset(_JS_RESERVED.split()) | {"type", "namespace", "declare", "readonly", "keyof"},
}
RESERVED["tsx"] = RESERVED["typescript"]
RESERVED["jsx"] = RESERVED["javascript"]
