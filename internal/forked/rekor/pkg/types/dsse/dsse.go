//
// Copyright 2023 The Sigstore Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package dsse

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/internal/forked/rekor/pkg/generated/models"
	"github.com/ferryhq/ferry/internal/forked/rekor/pkg/types"
)

const (
	KIND = "dsse"
)

type BaseDSSEType struct {
	types.RekorType
}

// Register adds the kind to types.TypeMap.
//
// ferry: upstream (pkg/types/dsse/dsse.go) does this in init. The fork's
// only reader, sigstore-go's pkg/tlog, calls the version packages' Register
// (which call this) once before it first reads an entry, so no initialiser
// runs at every start of ferry.
func Register() {
	types.TypeMap.Store(KIND, New)
}

func New() types.TypeImpl {
	bit := BaseDSSEType{}
	bit.Kind = KIND
	bit.VersionMap = VersionMap
	return &bit
}

var VersionMap = types.NewSemVerEntryFactoryMap()

func (it BaseDSSEType) UnmarshalEntry(pe models.ProposedEntry) (types.EntryImpl, error) {
	if pe == nil {
		return nil, errors.New("proposed entry cannot be nil")
	}

	in, ok := pe.(*models.DSSE)
	if !ok {
		return nil, errors.New("cannot unmarshal non-DSSE types")
	}

	if in.APIVersion == nil {
		return nil, errors.New("api version cannot be nil")
	}

	return it.VersionedUnmarshal(in, *in.APIVersion)
}

func (it *BaseDSSEType) CreateProposedEntry(ctx context.Context, version string, props types.ArtifactProperties) (models.ProposedEntry, error) {
	if version == "" {
		version = it.DefaultVersion()
	}
	ei, err := it.VersionedUnmarshal(nil, version)
	if err != nil {
		return nil, fmt.Errorf("fetching DSSE version implementation: %w", err)
	}
	return ei.CreateFromArtifactProperties(ctx, props)
}

func (it BaseDSSEType) DefaultVersion() string {
	return "0.0.1"
}
