module github.com/weftrt/weft/drivers/epoll

go 1.26

require (
	github.com/weftrt/weft/core v0.1.0
	github.com/weftrt/weft/drivers/internal v0.1.0
	golang.org/x/sys v0.32.0
)

require (
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-viper/mapstructure/v2 v2.4.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/parsers/json v1.0.1 // indirect
	github.com/knadh/koanf/parsers/toml/v2 v2.1.0 // indirect
	github.com/knadh/koanf/parsers/yaml v1.1.1 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.1 // indirect
	github.com/knadh/koanf/providers/file v1.2.1 // indirect
	github.com/knadh/koanf/v2 v2.4.1 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/pelletier/go-toml/v2 v2.2.2 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/weftrt/weft/conformance v0.1.0
	github.com/weftrt/weft/lib v0.1.0 // indirect
	github.com/weftrt/weft/runtime v0.1.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

// Sibling modules, so the driver builds and tests on its own (GOWORK=off).
// It requires no other scheduler, driver or timer module: the tests that
// compose it with one live in the integration module.
replace (
	github.com/weftrt/weft/core => ../../core
	github.com/weftrt/weft/drivers/internal => ../internal
)

replace github.com/weftrt/weft/runtime => ../../runtime

replace github.com/weftrt/weft/lib => ../../lib

replace github.com/weftrt/weft/conformance => ../../conformance
