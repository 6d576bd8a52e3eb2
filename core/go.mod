module github.com/weftrt/weft/core

go 1.26
