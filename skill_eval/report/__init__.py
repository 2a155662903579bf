"""Reports of an evaluation artifact: the view they all read, the terminal table, markdown,
JUnit XML, the HTML report (templates/ beside this file), `show` and `compare`."""
