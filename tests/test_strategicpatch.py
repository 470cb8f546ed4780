"""Strategic merge patch (apimachinery's strategicpatch/patch.go), on small structs with Go's patch tags."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from genericserver.apimachinery.strategicpatch.patch import PatchError, strategic_merge_patch
from genericserver.apimachinery.structs import Field, ListOf, MapOf, Struct

ITEM = Struct("test.MergeItem", "test.MergeItem", "", (
    Field("name", 1, "string"), Field("value", 2, "string"), Field("other", 3, "string"),
    Field("mergingList", 4, ListOf("test.MergeItem"), patch_strategy="merge", patch_merge_key="name"),
    Field("nonMergingList", 5, ListOf("string")),
    Field("mergingIntList", 6, ListOf("int64"), patch_strategy="merge"),
    Field("simpleMap", 7, MapOf("string")),
))
# mergingList items are MergeItems too (a recursive struct, as in Go's test)
ROOT = Struct("test.Root", "test.Root", "", (
    Field("name", 1, "string"),
    Field("mergingList", 4, ListOf(ITEM), patch_strategy="merge", patch_merge_key="name"),
    Field("nonMergingList", 5, ListOf("string")),
    Field("mergingIntList", 6, ListOf("int64"), patch_strategy="merge"),
    Field("simpleMap", 7, MapOf("string")),
))


@pytest.mark.parametrize("original, patch, want", [
    ({"name": "1", "value": "1"}, {"value": None}, {"name": "1"}),
    ({"simpleMap": {"a": "1"}}, {"simpleMap": {"b": "2"}}, {"simpleMap": {"a": "1", "b": "2"}}),
    ({"simpleMap": {"a": "1", "b": "2"}}, {"simpleMap": {"a": None}}, {"simpleMap": {"b": "2"}}),
    ({"mergingList": [{"name": "1", "value": "1"}, {"name": "2"}]}, {"mergingList": [{"name": "1", "value": "a"}, {"name": "3"}]},
     {"mergingList": [{"name": "1", "value": "a"}, {"name": "2"}, {"name": "3"}]}),
    ({"mergingList": [{"name": "1"}, {"name": "2"}]}, {"mergingList": [{"name": "1", "$patch": "delete"}]}, {"mergingList": [{"name": "2"}]}),
    ({"mergingList": [{"name": "1"}, {"name": "2"}]}, {"mergingList": [{"name": "3"}, {"$patch": "replace"}]}, {"mergingList": [{"name": "3"}]}),
    ({"nonMergingList": ["a", "b"]}, {"nonMergingList": ["c"]}, {"nonMergingList": ["c"]}),
    ({"mergingIntList": [1, 2]}, {"mergingIntList": [2, 3]}, {"mergingIntList": [1, 2, 3]}),
    ({"mergingIntList": [1, 2, 3]}, {"$deleteFromPrimitiveList/mergingIntList": [2]}, {"mergingIntList": [1, 3]}),
    ({"mergingList": [{"name": "1"}, {"name": "2"}]}, {"$setElementOrder/mergingList": [{"name": "2"}, {"name": "1"}]},
     {"mergingList": [{"name": "2"}, {"name": "1"}]}),
    ({"name": "1", "value": "x", "other": "y"}, {"$retainKeys": ["name", "other"], "other": "z"}, {"name": "1", "other": "z"}),
    ({"name": "1", "simpleMap": {"a": "1"}}, {"$patch": "replace", "name": "2"}, {"name": "2"}),
    ({"name": "1"}, {"$patch": "delete"}, {}),
], ids=["null-deletes", "map-merges", "map-key-null", "merge-by-key", "delete-directive", "replace-list", "non-merging-replaced",
        "primitive-set", "delete-from-primitive-list", "set-element-order", "retain-keys", "replace-map", "delete-map"])
def test_strategic_merge_patch(original, patch, want):
    assert strategic_merge_patch(original, patch, ROOT) == want


def test_the_original_is_not_changed():
    original = {"simpleMap": {"a": "1"}}
    strategic_merge_patch(original, {"simpleMap": {"a": None}}, ROOT)
    assert original == {"simpleMap": {"a": "1"}}


@pytest.mark.parametrize("patch, message", [
    ({"$patch": "explode"}, "unknown patch type: explode in map: map[$patch:explode]"),
    ({"mergingList": [{"value": "x"}]}, "map: map[value:x] does not contain declared merge key: name"),
    ({"$deleteFromPrimitiveList/mergingIntList": 3}, "invalid patch format of primitive list"),
])
def test_bad_patches_are_refused_with_gos_texts(patch, message):
    with pytest.raises(PatchError, match=message.replace("[", r"\[").replace("]", r"\]").replace("$", r"\$")):
        strategic_merge_patch({"mergingList": [{"name": "1"}], "mergingIntList": [1]}, patch, ROOT)


MAPS = st.dictionaries(st.sampled_from("abcd"), st.text(max_size=3), max_size=4)


@given(MAPS, MAPS)
def test_a_patch_of_the_difference_of_two_maps_turns_one_into_the_other(a, b):
    # the patch a two-way diff of flat maps makes: changed and new keys, null for removed ones
    patch = {k: v for k, v in b.items() if a.get(k) != v} | {k: None for k in a if k not in b}
    assert strategic_merge_patch({"simpleMap": a}, {"simpleMap": patch}, ROOT) == ({"simpleMap": b} if b or a else {"simpleMap": {}})
