"""What the tests share: helpers, fakes and data files, imported as ``support.<module>``.

A package (unlike the test folders) so that its modules have one name wherever a test
runs from; no test module imports another test module (tests/suite_tests checks it).
"""
