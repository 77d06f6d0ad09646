// Tensor aliases templated on the scalar type, for the trainable layers. Layers run in float for
// training and in double for the finite-difference gradient checks (a central difference in
// float cannot resolve a relative error of 1e-6). Each layer's kernels are templates compiled
// once in common/src and explicitly instantiated for float and double; Mat == MatT<float>.
#pragma once

#include "attn/tensor/tensor.hpp"

namespace attn {

template <class T> using VecT = xt::xtensor<T, 1>;
template <class T> using MatT = xt::xtensor<T, 2>;
template <class T> using Tensor3T = xt::xtensor<T, 3>;
template <class T> using Tensor4T = xt::xtensor<T, 4>;
using VecD = VecT<double>;
using Tensor3D = Tensor3T<double>;
using Tensor4D = Tensor4T<double>;

}  // namespace attn
