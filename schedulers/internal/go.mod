module github.com/weftrt/weft/schedulers/internal

go 1.26

require github.com/weftrt/weft/core v0.1.0

// Sibling modules, so the packages build and test on their own (GOWORK=off).
replace github.com/weftrt/weft/core => ../../core

replace github.com/weftrt/weft/runtime => ../../runtime

replace github.com/weftrt/weft/lib => ../../lib

replace github.com/weftrt/weft/conformance => ../../conformance
