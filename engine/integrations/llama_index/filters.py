"""LlamaIndex ``MetadataFilters`` (every operator, AND / OR / NOT, nested) as the integrations' filter
tree, which becomes bound WHERE conditions (tesseradb.integrations.filters)."""
from __future__ import annotations

from tesseradb.integrations.filters import AllOf, AnyOf, Cond, Filter, FilterError, NoneOf
from tesseradb.integrations.llama_index._core import FilterCondition, FilterOperator, MetadataFilters

OPERATORS = {
    FilterOperator.EQ: "eq", FilterOperator.NE: "ne", FilterOperator.GT: "gt", FilterOperator.GTE: "gte",
    FilterOperator.LT: "lt", FilterOperator.LTE: "lte", FilterOperator.IN: "in", FilterOperator.NIN: "nin",
    FilterOperator.ANY: "any", FilterOperator.ALL: "all", FilterOperator.CONTAINS: "contains",
    FilterOperator.TEXT_MATCH: "text_match", FilterOperator.TEXT_MATCH_INSENSITIVE: "text_match_insensitive",
    FilterOperator.IS_EMPTY: "is_empty",
}
CONDITIONS = {FilterCondition.AND: AllOf, FilterCondition.OR: AnyOf, FilterCondition.NOT: NoneOf}


def to_tree(filters: MetadataFilters | None) -> Filter | None:
    if filters is None or not filters.filters:
        return None
    parts: list[Filter] = []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            sub = to_tree(item)
            if sub is not None:
                parts.append(sub)
        elif item.operator in OPERATORS:
            parts.append(Cond(item.key, OPERATORS[item.operator], item.value))
        else:
            raise FilterError(f"unsupported filter operator {item.operator!r}")
    return CONDITIONS[filters.condition or FilterCondition.AND](parts)
