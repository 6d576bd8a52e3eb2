module github.com/weftrt/weft/drivers/internal

go 1.26

require (
	github.com/weftrt/weft/core v0.1.0
	golang.org/x/sys v0.32.0
)

// Sibling modules, so the packages build and test on their own (GOWORK=off).
replace github.com/weftrt/weft/core => ../../core

replace github.com/weftrt/weft/runtime => ../../runtime

replace github.com/weftrt/weft/lib => ../../lib

replace github.com/weftrt/weft/conformance => ../../conformance
