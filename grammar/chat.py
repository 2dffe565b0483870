"""The Lark rules of Manticore's conversational-search statements (docs/chat.md), as a Transformer mixin
of grammar/ddl.py: CREATE / SHOW / DESCRIBE / DROP CHAT MODEL and CALL CHAT."""
from __future__ import annotations

from lark import Token

from . import ast


def _names(items: list) -> list[str]:
    return [i for i in items if isinstance(i, str) and not isinstance(i, Token)
            and i not in ("if_exists", "if_not_exists")]


class ChatRules:
    def chat_option(self, items):
        return (items[0], items[1])

    def create_chat_model(self, items):
        options = tuple(i for i in items if isinstance(i, tuple))
        return ast.CreateChatModel(name=_names(items)[0], options=options,
                                   if_not_exists="if_not_exists" in items)

    def show_chat_models(self, items):
        like = [i[1] for i in items if isinstance(i, tuple) and i[0] == "like"]
        return ast.ShowChatModels(like=like[0] if like else None)

    def describe_chat_model(self, items):
        return ast.DescribeChatModel(name=_names(items)[0])

    def drop_chat_model(self, items):
        return ast.DropChatModel(name=_names(items)[0], if_exists="if_exists" in items)

    def call_chat(self, items):
        return ast.CallChat(args=tuple(i for i in items if not isinstance(i, tuple)),
                            options=tuple(i for i in items if isinstance(i, tuple)))
