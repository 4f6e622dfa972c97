//! Whether a system of linear inequalities has a non-negative solution,
//! decided exactly over the rationals.
//!
//! The method is the first phase of the simplex method with Bland's rule,
//! which cannot cycle: it moves between vertices of the region, lowering
//! the total violation, until none is left (a solution) or no move lowers
//! it (none exists). Every number is an exact fraction of `i128`s; a
//! fraction that would overflow, or more than [`MAX_PIVOTS`] moves, leave
//! the question undecided, never answered wrongly.
//!
//! Cost: each move is O(rows · (columns + rows)) fraction operations, and
//! there are at most [`MAX_PIVOTS`] of them.

/// Moves before the question is left undecided. Systems from plans take a
/// handful; the bound makes the worst case a stated cost.
pub const MAX_PIVOTS: usize = 512;

/// One inequality: `Σ coefficients[j] · x[j] <= bound`.
pub struct Row {
    pub coefficients: Vec<i128>,
    pub bound: i128,
}

/// `Some(true)` if some `x >= 0` satisfies every row, `Some(false)` if none
/// does, `None` if that could not be decided within the limits. Every row
/// has `columns` coefficients.
pub fn feasible(rows: &[Row], columns: usize) -> Option<bool> {
    // `x = 0` satisfies every row whose bound is not negative.
    if rows.iter().all(|row| row.bound >= 0) {
        return Some(true);
    }
    Tableau::new(rows, columns)?.solve()
}

/// An exact fraction, `numerator / denominator`, in lowest terms with a
/// positive denominator.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Fraction {
    numerator: i128,
    denominator: i128,
}

impl Fraction {
    const ZERO: Fraction = Fraction {
        numerator: 0,
        denominator: 1,
    };

    fn whole(value: i128) -> Fraction {
        Fraction {
            numerator: value,
            denominator: 1,
        }
    }

    fn new(numerator: i128, denominator: i128) -> Option<Fraction> {
        if denominator == 0 {
            return None;
        }
        let divisor = gcd(numerator.checked_abs()?, denominator.checked_abs()?).max(1);
        let sign = denominator.signum();
        Some(Fraction {
            numerator: sign.checked_mul(numerator / divisor)?,
            denominator: sign.checked_mul(denominator / divisor)?,
        })
    }

    fn is_positive(self) -> bool {
        self.numerator > 0
    }

    fn is_zero(self) -> bool {
        self.numerator == 0
    }

    fn mul(self, other: Fraction) -> Option<Fraction> {
        // Cross-reducing first keeps the products small.
        let a = gcd(self.numerator.abs(), other.denominator).max(1);
        let b = gcd(other.numerator.abs(), self.denominator).max(1);
        Fraction::new(
            (self.numerator / a).checked_mul(other.numerator / b)?,
            (self.denominator / b).checked_mul(other.denominator / a)?,
        )
    }

    fn div(self, other: Fraction) -> Option<Fraction> {
        self.mul(Fraction::new(other.denominator, other.numerator)?)
    }

    fn add(self, other: Fraction) -> Option<Fraction> {
        let common = gcd(self.denominator, other.denominator).max(1);
        let left = self.numerator.checked_mul(other.denominator / common)?;
        let right = other.numerator.checked_mul(self.denominator / common)?;
        Fraction::new(
            left.checked_add(right)?,
            (self.denominator / common).checked_mul(other.denominator)?,
        )
    }

    fn sub(self, other: Fraction) -> Option<Fraction> {
        self.add(Fraction {
            numerator: other.numerator.checked_neg()?,
            denominator: other.denominator,
        })
    }

    fn less_than(self, other: Fraction) -> Option<bool> {
        Some(self.sub(other)?.numerator < 0)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The phase-one tableau: each row `Σ cells[j] · v[j] = rhs` over the
/// original columns and one slack per row, with a basic variable per row;
/// rows whose bound is negative start on an artificial variable, and the
/// objective is the sum of those still in the basis.
struct Tableau {
    cells: Vec<Vec<Fraction>>,
    rhs: Vec<Fraction>,
    /// The basic variable of each row: a column, or `columns + rows + i`
    /// for row `i`'s artificial.
    basis: Vec<usize>,
    /// The reduced costs of the objective (sum of artificials), and its
    /// value: the solution exists exactly when it can reach zero.
    objective: Vec<Fraction>,
    violation: Fraction,
}

impl Tableau {
    fn new(rows: &[Row], columns: usize) -> Option<Tableau> {
        let width = columns + rows.len();
        let mut tableau = Tableau {
            cells: Vec::with_capacity(rows.len()),
            rhs: Vec::with_capacity(rows.len()),
            basis: Vec::with_capacity(rows.len()),
            objective: vec![Fraction::ZERO; width],
            violation: Fraction::ZERO,
        };
        for (i, row) in rows.iter().enumerate() {
            debug_assert_eq!(row.coefficients.len(), columns);
            // A negative bound: negate the row, so the slack enters with -1
            // and an artificial variable carries the initial violation.
            let sign = if row.bound < 0 { -1 } else { 1 };
            let mut cells: Vec<Fraction> = row
                .coefficients
                .iter()
                .map(|&c| Some(Fraction::whole(c.checked_mul(sign)?)))
                .collect::<Option<_>>()?;
            cells.extend((0..rows.len()).map(|j| Fraction::whole(if i == j { sign } else { 0 })));
            let rhs = Fraction::whole(row.bound.checked_mul(sign)?);
            if sign < 0 {
                for (total, cell) in tableau.objective.iter_mut().zip(&cells) {
                    *total = total.add(*cell)?;
                }
                tableau.violation = tableau.violation.add(rhs)?;
                tableau.basis.push(width + i);
            } else {
                tableau.basis.push(columns + i);
            }
            tableau.cells.push(cells);
            tableau.rhs.push(rhs);
        }
        Some(tableau)
    }

    fn solve(mut self) -> Option<bool> {
        for _ in 0..MAX_PIVOTS {
            if self.violation.is_zero() {
                return Some(true);
            }
            // Bland's rule: the first column that lowers the violation...
            let Some(entering) = self.objective.iter().position(|c| c.is_positive()) else {
                return Some(false);
            };
            // ...and, among the rows that limit it most, the one whose basic
            // variable comes first.
            let mut leaving: Option<(usize, Fraction)> = None;
            for (row, cells) in self.cells.iter().enumerate() {
                let cell = cells[entering];
                if !cell.is_positive() {
                    continue;
                }
                let ratio = self.rhs[row].div(cell)?;
                let better = match leaving {
                    None => true,
                    Some((best, limit)) => {
                        ratio.less_than(limit)?
                            || (ratio == limit && self.basis[row] < self.basis[best])
                    }
                };
                if better {
                    leaving = Some((row, ratio));
                }
            }
            // An unlimited column lowers the violation without end, which a
            // sum of non-negative artificials cannot do.
            let (row, _) = leaving?;
            self.pivot(row, entering)?;
        }
        None
    }

    fn pivot(&mut self, row: usize, column: usize) -> Option<()> {
        let pivot = self.cells[row][column];
        for cell in self.cells[row].iter_mut() {
            *cell = cell.div(pivot)?;
        }
        self.rhs[row] = self.rhs[row].div(pivot)?;
        let (pivot_cells, pivot_rhs) = (self.cells[row].clone(), self.rhs[row]);
        for other in 0..self.cells.len() {
            let factor = self.cells[other][column];
            if other == row || factor.is_zero() {
                continue;
            }
            eliminate(&mut self.cells[other], &pivot_cells, factor)?;
            self.rhs[other] = self.rhs[other].sub(factor.mul(pivot_rhs)?)?;
        }
        let factor = self.objective[column];
        if !factor.is_zero() {
            eliminate(&mut self.objective, &pivot_cells, factor)?;
            self.violation = self.violation.sub(factor.mul(pivot_rhs)?)?;
        }
        self.basis[row] = column;
        Some(())
    }
}

/// `target -= factor · source`, cell by cell.
fn eliminate(target: &mut [Fraction], source: &[Fraction], factor: Fraction) -> Option<()> {
    for (cell, &by) in target.iter_mut().zip(source) {
        if !by.is_zero() {
            *cell = cell.sub(factor.mul(by)?)?;
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(coefficients: &[i128], bound: i128) -> Row {
        Row {
            coefficients: coefficients.to_vec(),
            bound,
        }
    }

    #[test]
    fn decides_small_systems() {
        // x >= 1 and x <= 3.
        assert_eq!(feasible(&[row(&[-1], -1), row(&[1], 3)], 1), Some(true));
        // x >= 3 and x <= 1.
        assert_eq!(feasible(&[row(&[-1], -3), row(&[1], 1)], 1), Some(false));
        // x + y >= 4, x <= 1, y <= 2.
        let rows = [row(&[-1, -1], -4), row(&[1, 0], 1), row(&[0, 1], 2)];
        assert_eq!(feasible(&rows, 2), Some(false));
        // x + y >= 3, x <= 1, y <= 2: exactly on the corner.
        let rows = [row(&[-1, -1], -3), row(&[1, 0], 1), row(&[0, 1], 2)];
        assert_eq!(feasible(&rows, 2), Some(true));
        // 2x - y >= 1 with y >= 2x: none.
        let rows = [row(&[-2, 1], -1), row(&[2, -1], 0)];
        assert_eq!(feasible(&rows, 2), Some(false));
        // No rows, or none violated at zero.
        assert_eq!(feasible(&[], 3), Some(true));
        assert_eq!(feasible(&[row(&[1, -1], 0)], 2), Some(true));
    }

    #[test]
    fn fractions_are_exact() {
        // 3x >= 1 and 3x <= 1: only x = 1/3.
        assert_eq!(feasible(&[row(&[-3], -1), row(&[3], 1)], 1), Some(true));
        // 3x >= 2 and 2x <= 1: x >= 2/3 and x <= 1/2.
        assert_eq!(feasible(&[row(&[-3], -2), row(&[2], 1)], 1), Some(false));
    }

    #[test]
    fn huge_numbers_leave_it_undecided() {
        let big = i128::MAX / 2;
        let rows = [row(&[-big, -big + 1], -big), row(&[big - 1, big], 1)];
        // Either decided correctly (there is no solution: x, y would need
        // big·(x + y) >= big and (big - 1)·(x + y) <= 1) or left undecided.
        assert_ne!(feasible(&rows, 2), Some(true));
    }

    /// Against a brute-force search over a fine grid, for systems whose
    /// solutions, when there are any, include grid points.
    #[test]
    fn agrees_with_a_grid_search_on_integer_corners() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |range: i128| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % (2 * range as u64 + 1)) as i128 - range
        };
        for _ in 0..1000 {
            // Each row is `±x_j <= b` or `x_j - x_k <= b`: difference
            // constraints, whose vertices are integer points no larger
            // than the sum of the bounds' sizes (12).
            let columns = 3;
            let rows: Vec<Row> = (0..4)
                .map(|_| {
                    let mut coefficients = vec![0; columns];
                    let j = next(1).unsigned_abs() as usize;
                    let k = (j + 1 + next(1).unsigned_abs() as usize % 2) % columns;
                    coefficients[j] = if next(1) >= 0 { 1 } else { -1 };
                    if next(1) > 0 {
                        coefficients[k] = -coefficients[j];
                    }
                    row(&coefficients, next(4))
                })
                .collect();
            let grid_has_a_solution = (0..=16).any(|x| {
                (0..=16).any(|y| {
                    (0..=16).any(|z| {
                        rows.iter().all(|row| {
                            row.coefficients[0] * x
                                + row.coefficients[1] * y
                                + row.coefficients[2] * z
                                <= row.bound
                        })
                    })
                })
            });
            assert_eq!(feasible(&rows, columns), Some(grid_has_a_solution));
        }
    }
}
