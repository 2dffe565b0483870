"""The client's character sets: what the server converts between a MySQL client and the engine.

The engine keeps text as Unicode. A client may talk in another character set, and the server
converts as MySQL does: ``character_set_client`` decides how statement text and string parameters
are decoded; ``character_set_results`` how text values and column names are encoded (a character
the set cannot hold becomes ``?``), and a text column's definition carries that set's default
collation id. ``character_set_results = NULL`` converts nothing (UTF-8, as stored); ``binary`` sends
the stored UTF-8 bytes with charset 63 on text columns, so clients return bytes. BLOB columns are
never converted. utf8mb4, the default, is the fast path: nothing here runs for it.

SET NAMES / SET CHARACTER SET / the handshake's collation set the variables (:func:`set_names`,
:func:`set_character_set`, :func:`follow_client`); the names are checked as MySQL checks them
(``ERROR 1115 (42000): Unknown character set: 'xyz'``, ``ERROR 1273 Unknown collation``, ``ERROR
1231`` for a set that cannot be the client's). MySQL's ``latin1`` is Windows-1252 (0x80 is ``€``)
with its five unassigned bytes mapped to the C1 controls of the same number, as MySQL's
strings/ctype-latin1.cc maps them; Python's ``latin-1`` would make 0x80 U+0080.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any

from mysql_mimic import ResultColumn
from mysql_mimic.charset import CharacterSet, Collation
from mysql_mimic.types import ColumnType
from mysql_mimic.variables import DEFAULT, SessionVariables
from sqlglot.tokens import TokenType

from tesseradb import errors

CLIENT, RESULTS, CONNECTION = "character_set_client", "character_set_results", "character_set_connection"
COLLATION = "collation_connection"
CHARSET_VARIABLES = (CLIENT, RESULTS, CONNECTION, "character_set_database", "character_set_server")
COLLATION_VARIABLES = (COLLATION, "collation_database", "collation_server")
NO_CONVERSION = (None, "utf8mb4")       # character_set_results values that send text as stored
CODEC_PREFIX = "tesseradb_mysql_"       # the codecs registered here: tesseradb_mysql_<MySQL's name>

# MySQL's latin1: cp1252, its holes (0x81 0x8D 0x8F 0x90 0x9D) the C1 controls of the same number.
_LATIN1_TABLE = "".join(bytes([b]).decode("cp1252", "ignore") or chr(b) for b in range(256))
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")      # what utf8mb3 and ucs2 cannot hold


@dataclass(frozen=True)
class Spec:
    codec: str | None           # Python's codec; None: MySQL has it, Python does not (refused, 1231)
    client: bool = True         # may be character_set_client (MySQL refuses ucs2, utf16, utf16le, utf32)
    bmp_only: bool = False      # 3-byte UTF-8 / UCS-2: a character past U+FFFF becomes '?'


# MySQL 8.0's character sets (SHOW CHARACTER SET), with the Python codec that converts each.
SPECS: dict[str, Spec] = {
    "armscii8": Spec(None), "ascii": Spec("ascii"), "big5": Spec("big5"), "binary": Spec("utf-8"),
    "cp1250": Spec("cp1250"), "cp1251": Spec("cp1251"), "cp1256": Spec("cp1256"), "cp1257": Spec("cp1257"),
    "cp850": Spec("cp850"), "cp852": Spec("cp852"), "cp866": Spec("cp866"), "cp932": Spec("cp932"),
    "dec8": Spec(None), "eucjpms": Spec(None), "euckr": Spec("euc_kr"), "gb18030": Spec("gb18030"),
    "gb2312": Spec("gb2312"), "gbk": Spec("gbk"), "geostd8": Spec(None), "greek": Spec("iso8859_7"),
    "hebrew": Spec("iso8859_8"), "hp8": Spec("hp_roman8"), "keybcs2": Spec(None), "koi8r": Spec("koi8_r"),
    "koi8u": Spec("koi8_u"), "latin1": Spec("mysql_latin1"), "latin2": Spec("iso8859_2"),
    "latin5": Spec("iso8859_9"), "latin7": Spec("iso8859_13"), "macce": Spec("mac_latin2"),
    "macroman": Spec("mac_roman"), "sjis": Spec("shift_jis"), "swe7": Spec(None), "tis620": Spec("tis_620"),
    "ucs2": Spec("utf-16-be", client=False, bmp_only=True), "ujis": Spec("euc_jp"),
    "utf16": Spec("utf-16-be", client=False), "utf16le": Spec("utf-16-le", client=False),
    "utf32": Spec("utf-32-be", client=False), "utf8mb3": Spec("utf-8", bmp_only=True), "utf8mb4": Spec("utf-8"),
}
ALIASES = {"utf8": "utf8mb3"}           # MySQL 8.0 reports utf8 as utf8mb3
MIMIC_NAMES = {"utf8mb3": "utf8"}       # mysql-mimic's member for it


def _mysql_latin1() -> codecs.CodecInfo:
    encoding = codecs.charmap_build(_LATIN1_TABLE)
    return codecs.CodecInfo(name=CODEC_PREFIX + "latin1",
                            encode=lambda text, errors="strict": codecs.charmap_encode(text, errors, encoding),
                            decode=lambda data, errors="strict": codecs.charmap_decode(data, errors, _LATIN1_TABLE))


def _replacing(name: str, spec: Spec) -> codecs.CodecInfo:
    """Encodes as MySQL converts results: '?' for each character the set cannot hold (whatever
    ``errors`` the caller asked for: mysql-mimic's row writers ask for none); decodes strictly."""
    inner = _mysql_latin1() if spec.codec == "mysql_latin1" else codecs.lookup(spec.codec or "")

    def encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
        held = _ASTRAL.sub("?", text) if spec.bmp_only else text
        return inner.encode(held, "replace")[0], len(text)
    return codecs.CodecInfo(name=CODEC_PREFIX + name, encode=encode, decode=inner.decode)


def _search(name: str) -> codecs.CodecInfo | None:
    if not name.startswith(CODEC_PREFIX):
        return None
    mysql = name[len(CODEC_PREFIX):]
    spec = SPECS.get(mysql)
    return _replacing(mysql, spec) if spec is not None and spec.codec is not None else None


codecs.register(_search)


@dataclass(frozen=True)
class Charset:
    """A character set the server converts to and from."""
    name: str                   # MySQL's name, as SHOW VARIABLES reports it
    number: CharacterSet        # mysql-mimic's member: its value is the default collation's id
    codec: str                  # the registered codec ('?' for what the set cannot hold)
    client: bool

    def encode(self, text: str) -> bytes:
        return text.encode(self.codec)

    def decode(self, data: bytes) -> str:
        """Strict: bytes that are not text in this set raise UnicodeDecodeError."""
        return bytes(data).decode(self.codec)

    @property
    def mimic(self) -> CharacterSet:
        """What mysql-mimic's own parsers decode with (user and database names): this set when its
        codec knows it, else latin1, which keeps every byte (binary: UTF-8, as stored)."""
        if self.name == "binary":
            return CharacterSet.utf8mb4
        try:
            codecs.lookup(self.number.codec)
        except LookupError:
            return CharacterSet.latin1
        return self.number


CHARSETS: dict[str, Charset] = {
    name: Charset(name, CharacterSet[MIMIC_NAMES.get(name, name)], CODEC_PREFIX + name, spec.client)
    for name, spec in SPECS.items() if spec.codec is not None
}
UTF8MB4 = CHARSETS["utf8mb4"]


# -- names, checked as MySQL checks them ----------------------------------------------------------
def unknown_charset(value: Any) -> errors.Error:
    return errors.ProgrammingError(f"Unknown character set: '{value}'", 1115, "42000")


def cannot_set(variable: str, value: Any) -> errors.Error:
    return errors.ProgrammingError(f"Variable '{variable}' can't be set to the value of '{value}'", 1231, "42000")


def charset_name(value: Any) -> str:
    """A character set variable's value (its schema type): MySQL's name, lower-cased; 1115 else."""
    name = str(value).strip().lower()
    name = ALIASES.get(name, name)
    if name not in SPECS:
        raise unknown_charset(value)
    return name


def collation_name(value: Any) -> str:
    """A collation variable's value (its schema type); ``ERROR 1273`` for a name MySQL does not have."""
    name = str(value).strip().lower()
    if _collation(name) is None:
        raise errors.ProgrammingError(f"Unknown collation: '{value}'", 1273, "HY000")
    return name


def _collation(name: str) -> Collation | None:
    return Collation.__members__.get(name.replace("utf8mb3_", "utf8_"))


def variable_types() -> dict[str, Any]:
    """The schema type of each character set and collation variable (app.server_variables)."""
    return {**dict.fromkeys(CHARSET_VARIABLES, charset_name), **dict.fromkeys(COLLATION_VARIABLES, collation_name)}


class WireVariables(SessionVariables):
    """A session's variables: ``character_set_results = NULL`` is NULL (no conversion), as in MySQL
    (mysql-mimic stores the default for NULL); NULL for the other character sets is MySQL's 1231."""

    def set(self, name: str, value: Any, force: bool = False) -> None:
        key = name.lower()
        if value is None and key in CHARSET_VARIABLES:
            if key != RESULTS:
                raise cannot_set(key, "NULL")
            self.get_schema(key)
            self._values[key] = None
            return
        super().set(name, value, force)


def binary_quoted(text: str, tokens: tuple) -> str | None:
    """``SET character_set_results = binary``, the value quoted (``'binary'``): mysql-mimic's parser
    (sqlglot) reads a bare ``binary`` as the start of a cast and fails. None when there is none."""
    base = tokens[0].start if tokens else 0
    cuts = [t for i, t in enumerate(tokens) if t.token_type == TokenType.BINARY and i > 0
            and tokens[i - 1].token_type == TokenType.EQ
            and (i + 1 == len(tokens) or tokens[i + 1].token_type == TokenType.COMMA)]
    if not cuts:
        return None
    for token in reversed(cuts):
        text = text[:token.start - base] + "'binary'" + text[token.end + 1 - base:]
    return text


# -- what the statements and the handshake set ------------------------------------------------
def set_names(variables: WireVariables, name: str, collate: str | None) -> None:
    """SET NAMES x [COLLATE y]: client, connection and results x; collation y or x's default."""
    if name.upper() == "DEFAULT":
        for variable in (CLIENT, CONNECTION, RESULTS, COLLATION):
            variables.set(variable, DEFAULT)
        return
    charset = charset_name(name)
    if collate:
        collation = _collation(collation_name(collate))
        if collation is None or collation.charset.name != MIMIC_NAMES.get(charset, charset):
            raise errors.ProgrammingError(f"COLLATION '{collate}' is not valid for CHARACTER SET '{charset}'",
                                          1253, "42000")
        collate = collate.lower()
    for variable in (CLIENT, CONNECTION, RESULTS):
        variables.set(variable, charset)
    variables.set(COLLATION, collate or _default_collation(charset, variables))


def set_character_set(variables: WireVariables, name: str) -> None:
    """SET CHARACTER SET x: client and results x; the connection's set and collation the database's."""
    if name.upper() == "DEFAULT":
        charset: Any = DEFAULT
    else:
        charset = charset_name(name)
    variables.set(CLIENT, charset)
    variables.set(RESULTS, charset)
    variables.set(CONNECTION, variables.get("character_set_database"))
    variables.set(COLLATION, variables.get("collation_database"))


def _default_collation(charset: str, variables: WireVariables) -> str:
    if charset == variables.get_schema(CLIENT)[1]:      # the server's own: its collation as configured
        return variables.get_schema(COLLATION)[1]
    return CharacterSet[MIMIC_NAMES.get(charset, charset)].default_collation.name


def follow_client(variables: WireVariables) -> None:
    """After the handshake or COM_CHANGE_USER (mysql-mimic set character_set_client from its
    collation): connection and results follow, as in MySQL; a set the server cannot convert, or
    that cannot be a client's, falls back to the server's default."""
    name = variables.get(CLIENT)
    charset = CHARSETS.get(name)
    if charset is None or not charset.client:
        name = variables.get_schema(CLIENT)[1]
        variables.set(CLIENT, name)
    variables.set(CONNECTION, name)
    variables.set(RESULTS, name)
    variables.set(COLLATION, _default_collation(name, variables))


def check(variables: WireVariables) -> None:
    """After a SET: the client's and the results' character sets are ones the server converts."""
    client = variables.get(CLIENT)
    if client not in CHARSETS or not CHARSETS[client].client:
        raise cannot_set(CLIENT, client)
    results = variables.get(RESULTS)
    if results is not None and results not in CHARSETS:
        raise cannot_set(RESULTS, results)


def conversions(variables: WireVariables) -> tuple[Charset | None, Charset | None]:
    """(client, results): None where text goes as UTF-8 (utf8mb4; results NULL)."""
    client, results = variables.get(CLIENT), variables.get(RESULTS)
    return (None if client == "utf8mb4" else CHARSETS.get(client),
            None if results in NO_CONVERSION else CHARSETS.get(results))


# -- results -------------------------------------------------------------------------------------
TEXT_TYPES = {ColumnType.VAR_STRING, ColumnType.STRING, ColumnType.VARCHAR, ColumnType.JSON, ColumnType.ENUM,
              ColumnType.SET}


def columns(cols: list[ResultColumn], charset: Charset) -> list[ResultColumn]:
    """A result's columns as ``charset`` sends them: each text column tagged with the set's collation
    id and encoding its values with the set's codec (mysql-mimic's text and binary row writers encode
    with ``codec``); numbers, dates and BLOBs as they were."""
    out = []
    for col in cols:
        if col.type not in TEXT_TYPES or col.character_set == CharacterSet.binary:
            out.append(col)
            continue
        text = ResultColumn(name=col.name, type=col.type, character_set=charset.number)
        text.codec = charset.codec
        out.append(text)
    return out


def wire_text(text: str | None, charset: Charset | None) -> str | None:
    """A name for mysql-mimic's column definition builder, which encodes names with Python's codec of
    the CharacterSet it is given: already encoded in ``charset``, each byte one latin-1 character
    (give the builder CharacterSet.latin1, which writes each back as that byte)."""
    if text is None or charset is None:
        return text
    return charset.encode(text).decode("latin-1")


def name_charset(charset: Charset | None) -> CharacterSet:
    """The CharacterSet to hand mysql-mimic's builder with names from :func:`wire_text`."""
    return CharacterSet.utf8mb4 if charset is None else CharacterSet.latin1
