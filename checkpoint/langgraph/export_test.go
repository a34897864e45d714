package langgraph

// RestoreDump is restoreDump for the external tests.
var RestoreDump = restoreDump
