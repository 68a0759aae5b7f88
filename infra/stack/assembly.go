package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// ApplyNag runs the cdk-nag AwsSolutions rule pack over scope at synthesis:
// every unsuppressed finding is an error annotation, which fails `cdk synth`
// and the tests.
func ApplyNag(scope constructs.IConstruct) {
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
}

// Finding is an annotation of a synthesized cloud assembly, such as a
// cdk-nag finding.
type Finding struct {
	Stack, Path, Message string
}

// Errors reads the error annotations (metadata type aws:cdk:error) of every
// stack in the cloud assembly in dir, as the CDK CLI does before it deploys.
func Errors(dir string) ([]Finding, error) { return Annotations(dir, "aws:cdk:error") }

// Annotations reads the annotations of one metadata type (aws:cdk:error,
// aws:cdk:warning, aws:cdk:info) of every stack in the cloud assembly in dir.
func Annotations(dir, typ string) ([]Finding, error) {
	var manifest struct {
		Artifacts map[string]struct {
			Type                   string                       `json:"type"`
			Metadata               map[string][]json.RawMessage `json:"metadata"`
			AdditionalMetadataFile string                       `json:"additionalMetadataFile"`
		} `json:"artifacts"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	var out []Finding
	for _, name := range sortedNames(manifest.Artifacts) {
		a := manifest.Artifacts[name]
		if a.Type != "aws:cloudformation:stack" {
			continue
		}
		metadata := map[string][]json.RawMessage{}
		for path, entries := range a.Metadata {
			metadata[path] = entries
		}
		if a.AdditionalMetadataFile != "" {
			var more map[string][]json.RawMessage
			b, err := os.ReadFile(filepath.Join(dir, a.AdditionalMetadataFile))
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(b, &more); err != nil {
				return nil, fmt.Errorf("%s: %w", a.AdditionalMetadataFile, err)
			}
			for path, entries := range more {
				metadata[path] = append(metadata[path], entries...)
			}
		}
		for _, path := range sortedNames(metadata) {
			for _, raw := range metadata[path] {
				var e struct {
					Type string `json:"type"`
					Data any    `json:"data"`
				}
				if err := json.Unmarshal(raw, &e); err != nil {
					return nil, fmt.Errorf("%s metadata of %s: %w", name, path, err)
				}
				if e.Type == typ {
					out = append(out, Finding{Stack: name, Path: path, Message: fmt.Sprint(e.Data)})
				}
			}
		}
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
