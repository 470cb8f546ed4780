"""The lazily formatted registration stack."""

from genericserver.runtime.stack import capture


def register():
    return capture()  # the stack of whoever called register()


def a_caller_with_a_name_to_find():
    return register()


def test_the_stack_names_the_callers_caller_and_not_capture_itself():
    text = str(a_caller_with_a_name_to_find())
    assert "a_caller_with_a_name_to_find" in text
    assert "return register()" in text  # source lines are looked up when formatted
    assert "def capture" not in text and "in register" not in text
