/*
Copyright 2014 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package loader

// ferry: this file is not Helm's. It is the part of
// k8s.io/apimachinery@v0.37.1 pkg/util/yaml/decoder.go that Helm's
// LoadValues calls (NewYAMLReader, YAMLReader.Read, LineReader.Read,
// YAMLSyntaxError), copied unexported and unchanged so that the loader
// links no k8s.io package (pkg/util/yaml also links pkg/util/json and
// sigs.k8s.io/json). TestLoadValuesMatchesHelm compares LoadValues with
// the real Helm's.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

const separator = "---"

type yamlSyntaxError struct {
	err error
}

func (e yamlSyntaxError) Error() string {
	return e.err.Error()
}

type lineReaderI interface {
	Read() ([]byte, error)
}

type yamlReader struct {
	reader lineReaderI
}

func newYAMLReader(r *bufio.Reader) *yamlReader {
	return &yamlReader{
		reader: &lineReader{reader: r},
	}
}

// Read returns a full YAML document.
func (r *yamlReader) Read() ([]byte, error) {
	var buffer bytes.Buffer
	for {
		line, err := r.reader.Read()
		if err != nil && err != io.EOF { //nolint:errorlint
			return nil, err
		}

		sep := len([]byte(separator))
		if i := bytes.Index(line, []byte(separator)); i == 0 {
			// We have a potential document terminator
			i += sep
			trimmed := strings.TrimSpace(string(line[i:]))
			// We only allow comments and spaces following the yaml doc separator, otherwise we'll return an error
			if len(trimmed) > 0 && string(trimmed[0]) != "#" {
				return nil, yamlSyntaxError{
					err: fmt.Errorf("invalid Yaml document separator: %s", trimmed),
				}
			}
			if buffer.Len() != 0 {
				return buffer.Bytes(), nil
			}
			if err == io.EOF { //nolint:errorlint
				return nil, err
			}
		}
		if err == io.EOF { //nolint:errorlint
			if buffer.Len() != 0 {
				// If we're at EOF, we have a final, non-terminated line. Return it.
				return buffer.Bytes(), nil
			}
			return nil, err
		}
		buffer.Write(line)
	}
}

type lineReader struct {
	reader *bufio.Reader
}

// Read returns a single line (with '\n' ended) from the underlying reader.
// An error is returned iff there is an error with the underlying reader.
func (r *lineReader) Read() ([]byte, error) {
	var (
		isPrefix bool  = true
		err      error = nil
		line     []byte
		buffer   bytes.Buffer
	)

	for isPrefix && err == nil {
		line, isPrefix, err = r.reader.ReadLine()
		buffer.Write(line)
	}
	buffer.WriteByte('\n')
	return buffer.Bytes(), err
}
